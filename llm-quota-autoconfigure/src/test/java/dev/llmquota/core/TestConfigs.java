package dev.llmquota.core;

import java.net.URI;
import java.time.Duration;
import java.time.ZoneId;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Builds engine configurations for tests in a few lines.
 */
public final class TestConfigs {

	public static final Accounting RESERVE_AND_REFUND = new Accounting(true, true, true, 1);

	private double headroom = 1.0;

	private Duration maxWait = Duration.ofSeconds(30);

	private Duration leaseTimeout = Duration.ofMinutes(10);

	private int maxPools = 1000;

	private Duration burstWindow = Duration.ofSeconds(2);

	private boolean inFlightGate = true;

	private Limits account = Limits.none();

	private ZoneId zone = ZoneId.of("UTC");

	private Accounting accounting = RESERVE_AND_REFUND;

	private Duration expectedLatency = Duration.ofMillis(1400);

	private final Map<String, PoolSpec> models = new LinkedHashMap<>();

	private PoolSpec template;

	private Mode mode = Mode.ENFORCE;

	public static TestConfigs provider() {
		return new TestConfigs();
	}

	public static Limits limits(Object... dimensionsAndValues) {
		Map<Dimension, Long> map = new LinkedHashMap<>();
		for (int i = 0; i < dimensionsAndValues.length; i += 2) {
			map.put((Dimension) dimensionsAndValues[i], ((Number) dimensionsAndValues[i + 1]).longValue());
		}
		return Limits.of(map);
	}

	public TestConfigs mode(Mode mode) {
		this.mode = mode;
		return this;
	}

	public TestConfigs headroom(double headroom) {
		this.headroom = headroom;
		return this;
	}

	public TestConfigs maxWait(Duration maxWait) {
		this.maxWait = maxWait;
		return this;
	}

	public TestConfigs leaseTimeout(Duration leaseTimeout) {
		this.leaseTimeout = leaseTimeout;
		return this;
	}

	public TestConfigs maxPools(int maxPools) {
		this.maxPools = maxPools;
		return this;
	}

	public TestConfigs burstWindow(Duration burstWindow) {
		this.burstWindow = burstWindow;
		return this;
	}

	public TestConfigs inFlightGate(boolean inFlightGate) {
		this.inFlightGate = inFlightGate;
		return this;
	}

	public TestConfigs account(Limits account) {
		this.account = account;
		return this;
	}

	public TestConfigs zone(ZoneId zone) {
		this.zone = zone;
		return this;
	}

	public TestConfigs accounting(Accounting accounting) {
		this.accounting = accounting;
		return this;
	}

	public TestConfigs expectedLatency(Duration expectedLatency) {
		this.expectedLatency = expectedLatency;
		return this;
	}

	public TestConfigs model(String name, Limits limits, String... aliases) {
		this.models.put(name, spec(name, limits, Set.of(aliases), Priority.INTERACTIVE));
		return this;
	}

	public TestConfigs model(String name, Limits limits, Priority priority) {
		this.models.put(name, spec(name, limits, Set.of(), priority));
		return this;
	}

	public TestConfigs template(Limits limits) {
		this.template = spec("default", limits, Set.of(), Priority.INTERACTIVE);
		return this;
	}

	private PoolSpec spec(String name, Limits limits, Set<String> aliases, Priority priority) {
		return new PoolSpec(name, aliases, limits, this.accounting, this.burstWindow, this.expectedLatency, 4096,
				priority, "chars:4", this.mode);
	}

	public QuotaConfig build() {
		ProviderSpec provider = new ProviderSpec("openai", URI.create("http://127.0.0.1:1"), "openai", "us", this.zone,
				this.account, this.burstWindow, this.inFlightGate, this.models, Optional.ofNullable(this.template),
				spec("unlisted", Limits.none(), Set.of(), Priority.INTERACTIVE), Optional.empty(), false, true);
		return new QuotaConfig(
				new QuotaSettings(this.headroom, this.maxWait, this.leaseTimeout, this.maxPools, Duration.ofMinutes(5)),
				Map.of(provider.id(), provider));
	}

	public QuotaEngine engine(QuotaStore store, QuotaClock clock) {
		QuotaEngine engine = new QuotaEngine(build(), store, clock);
		if (clock instanceof ManualClock manual) {
			// a shared store books on the engine's store thread: the clock waits for it
			manual.settleWith(engine::awaitQuiet);
		}
		return engine;
	}

	static List<Dimension> rates() {
		return List.of(Dimension.REQUESTS_PER_MINUTE, Dimension.TOKENS_PER_MINUTE, Dimension.INPUT_TOKENS_PER_MINUTE,
				Dimension.OUTPUT_TOKENS_PER_MINUTE);
	}

}
