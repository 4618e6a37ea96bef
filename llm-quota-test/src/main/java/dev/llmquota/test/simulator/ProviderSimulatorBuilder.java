package dev.llmquota.test.simulator;

import java.time.Duration;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import dev.llmquota.test.simulator.clock.SimClock;
import dev.llmquota.test.simulator.dialect.Dialect;
import dev.llmquota.test.simulator.dialect.Dialects;
import dev.llmquota.test.simulator.quota.Limits;
import dev.llmquota.test.simulator.quota.OutputPolicy;
import dev.llmquota.test.simulator.quota.QuotaBook;

/**
 * Configures and starts a {@link ProviderSimulator}.
 */
public final class ProviderSimulatorBuilder {

	private String host = "127.0.0.1";

	private int port;

	private SimClock clock;

	private Duration window = Duration.ofMinutes(1);

	private ZoneId dayZone = ZoneOffset.UTC;

	private boolean enforce = true;

	private boolean exhausted;

	private Limits account = Limits.unlimited();

	private Limits defaultModel = Limits.unlimited();

	private final java.util.Map<String, String> requiredHeaders = new java.util.LinkedHashMap<>();

	private final Map<String, Limits> models = new LinkedHashMap<>();

	private final Map<String, OutputPolicy> policies = new LinkedHashMap<>();

	private final List<Team> teams = new ArrayList<>();

	private final Map<Fault, Double> faultRates = new EnumMap<>(Fault.class);

	private Duration headerDelay = Duration.ofSeconds(2);

	private LatencyModel latency = LatencyModel.none();

	private long seed = 42;

	ProviderSimulatorBuilder() {
	}

	/**
	 * The address to bind; loopback by default.
	 * @param host the host
	 * @return this builder
	 */
	public ProviderSimulatorBuilder host(String host) {
		this.host = host;
		return this;
	}

	/**
	 * The port to bind; 0 (the default) picks a free one.
	 * @param port the port
	 * @return this builder
	 */
	public ProviderSimulatorBuilder port(int port) {
		this.port = port;
		return this;
	}

	/**
	 * The clock of all quota arithmetic and pacing; the system clock by default.
	 * @param clock the clock
	 * @return this builder
	 */
	public ProviderSimulatorBuilder clock(SimClock clock) {
		this.clock = clock;
		return this;
	}

	/**
	 * The enforcement window: each per-minute bucket holds at most this share of its
	 * limit, refilled continuously (Azure enforces over 1-10 s). One minute by default.
	 * @param window the window, positive
	 * @return this builder
	 */
	public ProviderSimulatorBuilder window(Duration window) {
		this.window = window;
		return this;
	}

	/**
	 * The calendar zone of per-day caps; UTC by default.
	 * @param zone the zone
	 * @return this builder
	 */
	public ProviderSimulatorBuilder dayZone(ZoneId zone) {
		this.dayZone = zone;
		return this;
	}

	/**
	 * Whether calls over a limit are refused (the default); when false they are answered
	 * and flagged in the request log.
	 * @param enforce whether to refuse
	 * @return this builder
	 */
	public ProviderSimulatorBuilder enforce(boolean enforce) {
		this.enforce = enforce;
		return this;
	}

	/**
	 * Starts with administrative exhaustion switched on.
	 * @param exhausted whether the account starts exhausted
	 * @return this builder
	 */
	public ProviderSimulatorBuilder exhausted(boolean exhausted) {
		this.exhausted = exhausted;
		return this;
	}

	public ProviderSimulatorBuilder account(Limits limits) {
		this.account = limits;
		return this;
	}

	/**
	 * Limits shared by all models of the account.
	 * @param limits configures the account's limits
	 * @return this builder
	 */
	public ProviderSimulatorBuilder account(Consumer<Limits.Builder> limits) {
		return account(build(limits));
	}

	public ProviderSimulatorBuilder model(String model, Limits limits) {
		this.models.put(model, limits);
		return this;
	}

	/**
	 * Limits of one model (its own pool).
	 * @param model the model id (or Azure deployment, or Bedrock model id)
	 * @param limits configures the model's limits
	 * @return this builder
	 */
	public ProviderSimulatorBuilder model(String model, Consumer<Limits.Builder> limits) {
		return model(model, build(limits));
	}

	/**
	 * Limits every unlisted model gets, each in its own pool; unlimited by default.
	 * @param limits configures the template
	 * @return this builder
	 */
	public ProviderSimulatorBuilder defaultModel(Consumer<Limits.Builder> limits) {
		this.defaultModel = build(limits);
		return this;
	}

	/**
	 * Overrides how a dialect meters output (reserve {@code max_tokens} and refund, or
	 * charge in real time).
	 * @param dialect the dialect id, for example {@code anthropic}
	 * @param policy the policy
	 * @return this builder
	 */
	public ProviderSimulatorBuilder outputPolicy(String dialect, OutputPolicy policy) {
		if (Dialects.all().stream().noneMatch((candidate) -> candidate.id().equals(dialect))) {
			throw new IllegalArgumentException("unknown dialect '" + dialect + "'");
		}
		this.policies.put(dialect, policy);
		return this;
	}

	public ProviderSimulatorBuilder latency(LatencyModel latency) {
		this.latency = latency;
		return this;
	}

	/**
	 * The latency and output-length model.
	 * @param latency configures the model
	 * @return this builder
	 */
	public ProviderSimulatorBuilder latency(Consumer<LatencyModel.Builder> latency) {
		LatencyModel.Builder builder = LatencyModel.builder();
		latency.accept(builder);
		return latency(builder.build());
	}

	/**
	 * Adds another team spending from the same account (and the model's pool) in the
	 * background, so remaining quota falls for reasons outside the client.
	 * @param model the model the team calls
	 * @param requestsPerMinute its request rate
	 * @param tokensPerMinute its token rate
	 * @return this builder
	 */
	public ProviderSimulatorBuilder sharedTeam(String model, long requestsPerMinute, long tokensPerMinute) {
		this.teams.add(new Team(model, requestsPerMinute, tokensPerMinute));
		return this;
	}

	/**
	 * Injects a fault into a share of calls.
	 * @param fault the fault
	 * @param probability the share, in [0, 1]
	 * @return this builder
	 */
	public ProviderSimulatorBuilder faultRate(Fault fault, double probability) {
		new FaultPlan(0).rate(fault, probability);
		this.faultRates.put(fault, probability);
		return this;
	}

	/**
	 * How long {@link Fault#DELAY_HEADERS} holds headers back; 2 s by default.
	 * @param delay the delay
	 * @return this builder
	 */
	public ProviderSimulatorBuilder headerDelay(Duration delay) {
		this.headerDelay = delay;
		return this;
	}

	/**
	 * Makes every call carry a header with this value, as a provider checks its API key:
	 * a call without it is answered 401 and served nothing.
	 * @param name the header, for example {@code api-key}
	 * @param value the value it must have
	 * @return this builder
	 */
	public ProviderSimulatorBuilder requireHeader(String name, String value) {
		this.requiredHeaders.put(name, value);
		return this;
	}

	/**
	 * The seed of random faults.
	 * @param seed the seed
	 * @return this builder
	 */
	public ProviderSimulatorBuilder seed(long seed) {
		this.seed = seed;
		return this;
	}

	/**
	 * Binds the server and starts serving.
	 * @return the running simulator
	 */
	public ProviderSimulator start() {
		SimClock clock = (this.clock != null) ? this.clock : SimClock.system();
		QuotaBook book = new QuotaBook(clock, this.window, this.dayZone, this.account, this.models, this.defaultModel);
		this.teams.forEach((team) -> book.addTeam(team.model(), team.requestsPerMinute(), team.tokensPerMinute()));
		FaultPlan faults = new FaultPlan(this.seed);
		Map<Fault, Double> rates = Map.copyOf(this.faultRates);
		Duration delay = this.headerDelay;
		Runnable resetFaults = () -> {
			faults.clear();
			rates.forEach(faults::rate);
			faults.headerDelay(delay);
		};
		resetFaults.run();
		List<Dialect> dialects = Dialects.all();
		SimulatorState state = new SimulatorState(clock, dialects, this.policies, book, this.latency, faults,
				this.enforce, this.exhausted, this.requiredHeaders);
		return new ProviderSimulator(state, this.host, this.port, resetFaults, this.exhausted);
	}

	private static Limits build(Consumer<Limits.Builder> limits) {
		Limits.Builder builder = Limits.builder();
		limits.accept(builder);
		return builder.build();
	}

	private record Team(String model, long requestsPerMinute, long tokensPerMinute) {
	}

}
