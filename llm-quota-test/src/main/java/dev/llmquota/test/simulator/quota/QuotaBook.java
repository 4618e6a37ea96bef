package dev.llmquota.test.simulator.quota;

import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.llmquota.test.simulator.clock.SimClock;

/**
 * The provider's books for one account: every model's pool plus the account pool, with
 * one lock so admission over all of them is a single conjunction.
 */
public final class QuotaBook {

	/** The scope name of account-wide meters. */
	public static final String ACCOUNT = "account";

	private final SimClock clock;

	private final Duration window;

	private final ZoneId dayZone;

	private final Map<String, Limits> modelLimits;

	private final Limits defaultModel;

	private final Limits accountLimits;

	private final Map<String, Pool> pools = new LinkedHashMap<>();

	private final List<BackgroundTeam> teams = new ArrayList<>();

	private Pool account;

	/**
	 * Counts resets; a call admitted before the latest one no longer touches the books.
	 */
	private long generation;

	/**
	 * Creates the books.
	 * @param clock the time source of all meters
	 * @param window the enforcement window: rate buckets hold this share of a minute's
	 * limit
	 * @param dayZone the calendar zone of per-day caps
	 * @param accountLimits account-wide limits
	 * @param modelLimits limits per model id
	 * @param defaultModel limits of each unlisted model (its own pool each)
	 */
	public QuotaBook(SimClock clock, Duration window, ZoneId dayZone, Limits accountLimits,
			Map<String, Limits> modelLimits, Limits defaultModel) {
		if (window.isZero() || window.isNegative()) {
			throw new IllegalArgumentException("window must be positive, was " + window);
		}
		this.clock = clock;
		this.window = window;
		this.dayZone = dayZone;
		this.accountLimits = accountLimits;
		this.modelLimits = Map.copyOf(modelLimits);
		this.defaultModel = defaultModel;
		this.account = newPool(ACCOUNT, accountLimits, true);
	}

	private Pool newPool(String scope, Limits limits, boolean isAccount) {
		long now = this.clock.nanoTime();
		Pool pool = new Pool(scope, limits, this.window, this.dayZone, this.clock::instant, now);
		for (BackgroundTeam team : this.teams) {
			if (isAccount || team.model().equals(scope)) {
				pool.drain(team, now);
			}
		}
		return pool;
	}

	private Pool pool(String model) {
		return this.pools.computeIfAbsent(model,
				(id) -> newPool(id, this.modelLimits.getOrDefault(id, this.defaultModel), false));
	}

	/**
	 * Adds a background team spending from the account and the model's pool.
	 * @param model the model the team calls
	 * @param requestsPerMinute its request rate
	 * @param tokensPerMinute its token rate (counted as input tokens)
	 */
	public synchronized void addTeam(String model, long requestsPerMinute, long tokensPerMinute) {
		long now = this.clock.nanoTime();
		BackgroundTeam team = new BackgroundTeam(model, requestsPerMinute, tokensPerMinute, now);
		this.account.drain(team, now);
		Pool existing = this.pools.get(model);
		if (existing != null) {
			existing.drain(team, now);
		}
		this.teams.add(team);
	}

	/**
	 * Admits a call on every meter of its model and of the account, or on none.
	 * @param model the model id
	 * @param inputTokens the provider's count of the input
	 * @param declaredMaxTokens the output ceiling the call declared, or 0 if none
	 * @param policy how output is metered
	 * @param enforce whether a call over a limit is refused (else admitted and flagged)
	 * @return the admission
	 */
	public synchronized Admission admit(String model, long inputTokens, long declaredMaxTokens, OutputPolicy policy,
			boolean enforce) {
		return admit(model, inputTokens, declaredMaxTokens, policy, enforce, false);
	}

	/**
	 * Admits a call on every meter of its model and of the account, or on none; a refused
	 * call's request may be charged, as some providers count refused requests.
	 * @param model the model id
	 * @param inputTokens the provider's count of the input
	 * @param declaredMaxTokens the output ceiling the call declared, or 0 if none
	 * @param policy how output is metered
	 * @param enforce whether a call over a limit is refused (else admitted and flagged)
	 * @param chargeRefused whether a refused call takes its request from the per-minute
	 * request buckets (see {@link #chargeRefused}); its refusal's wait then counts it
	 * @return the admission
	 */
	public synchronized Admission admit(String model, long inputTokens, long declaredMaxTokens, OutputPolicy policy,
			boolean enforce, boolean chargeRefused) {
		long maxTokens = (declaredMaxTokens > 0) ? declaredMaxTokens : pool(model).limits().defaultMaxTokens();
		long reserve = policy.reserveMaxTokens() ? maxTokens : 0;
		return admit(model, inputTokens, maxTokens, reserve, true, policy.refundUnusedOutput(), enforce, chargeRefused);
	}

	/**
	 * Admits a call that generates no output (embeddings) on every meter of its model and
	 * of the account, or on none: it has no output ceiling, not even the model's default,
	 * and needs room for its request and input only.
	 * @param model the model id
	 * @param inputTokens the provider's count of the input
	 * @param enforce whether a call over a limit is refused (else admitted and flagged)
	 * @return the admission
	 */
	public synchronized Admission admitInput(String model, long inputTokens, boolean enforce) {
		return admitInput(model, inputTokens, enforce, false);
	}

	/**
	 * Admits a call that generates no output, as
	 * {@link #admitInput(String, long, boolean)} does; a refused call's request may be
	 * charged.
	 * @param model the model id
	 * @param inputTokens the provider's count of the input
	 * @param enforce whether a call over a limit is refused (else admitted and flagged)
	 * @param chargeRefused whether a refused call takes its request from the per-minute
	 * request buckets
	 * @return the admission
	 */
	public synchronized Admission admitInput(String model, long inputTokens, boolean enforce, boolean chargeRefused) {
		return admit(model, inputTokens, 0, 0, false, true, enforce, chargeRefused);
	}

	private Admission admit(String model, long inputTokens, long maxTokens, long reserve, boolean generates,
			boolean refundUnused, boolean enforce, boolean chargeRefused) {
		long now = this.clock.nanoTime();
		catchUpTeams(now);
		Pool pool = pool(model);
		Map<Dimension, Long> take = amounts(inputTokens, reserve);
		Map<Dimension, Long> need = new EnumMap<>(take);
		// metering output in real time still needs some room left to start producing
		need.put(Dimension.OUTPUT_TOKENS_PER_MINUTE, Math.max(1, reserve));
		Refusal worst = worst(pool, need, generates, now);
		int burndown = pool.limits().outputBurndown();
		if (worst != null && enforce) {
			if (chargeRefused) {
				chargeRefused(model);
				// the wait the refusal tells counts the refusal itself
				worst = worst(pool, need, generates, now);
			}
			return new Admission(this.generation, model, worst, true, states(pool, now), maxTokens, 0,
					inputTokens + reserve, false, burndown);
		}
		for (Pool scope : List.of(pool, this.account)) {
			for (Meter meter : scope.meters()) {
				meter.take(take.get(meter.dimension()), now);
			}
		}
		return new Admission(this.generation, model, worst, enforce, states(pool, now), maxTokens, reserve,
				inputTokens + reserve, refundUnused, burndown);
	}

	/**
	 * The refusal with the longest wait among the meters that cannot take the call now.
	 */
	private Refusal worst(Pool pool, Map<Dimension, Long> need, boolean generates, long now) {
		Refusal worst = null;
		for (Pool scope : List.of(pool, this.account)) {
			for (Meter meter : scope.meters()) {
				if (!generates && meter.dimension() == Dimension.OUTPUT_TOKENS_PER_MINUTE) {
					// output meters never gate a call that produces nothing
					continue;
				}
				long amount = need.get(meter.dimension());
				if (!meter.fits(amount, now)) {
					Refusal refusal = refusal(scope.scope(), meter, amount, now);
					if (worst == null || longer(refusal, worst)) {
						worst = refusal;
					}
				}
			}
		}
		return worst;
	}

	/**
	 * Charges a refused call's request to the per-minute request buckets of its model and
	 * of the account, as a provider that counts refused requests does; they may go into
	 * debt, so refusals in a burst push the next admission back, but no deeper than a
	 * minute's limit: the refusals of the last minute at most.
	 * @param model the model id
	 */
	public synchronized void chargeRefused(String model) {
		long now = this.clock.nanoTime();
		for (Pool scope : List.of(pool(model), this.account)) {
			Meter meter = scope.meter(Dimension.REQUESTS_PER_MINUTE);
			if (meter != null) {
				meter.takeRefused(1, now);
			}
		}
	}

	private static Map<Dimension, Long> amounts(long input, long reserve) {
		Map<Dimension, Long> amounts = new EnumMap<>(Dimension.class);
		amounts.put(Dimension.REQUESTS_PER_MINUTE, 1L);
		amounts.put(Dimension.TOKENS_PER_MINUTE, input + reserve);
		amounts.put(Dimension.INPUT_TOKENS_PER_MINUTE, input);
		amounts.put(Dimension.OUTPUT_TOKENS_PER_MINUTE, reserve);
		amounts.put(Dimension.CONCURRENT_REQUESTS, 1L);
		amounts.put(Dimension.REQUESTS_PER_DAY, 1L);
		amounts.put(Dimension.TOKENS_PER_DAY, input + reserve);
		return amounts;
	}

	private static Refusal refusal(String scope, Meter meter, long amount, long now) {
		DimensionState state = meter.state(scope, now);
		long used = Math.max(0, state.limit() - state.remaining());
		return new Refusal(meter.dimension(), scope, meter.limit(), used, amount, meter.waitFor(amount, now));
	}

	private static boolean longer(Refusal candidate, Refusal current) {
		if (current.retryAfter() == null) {
			return false;
		}
		return candidate.retryAfter() == null || candidate.retryAfter().compareTo(current.retryAfter()) > 0;
	}

	/**
	 * Charges output produced so far when output is metered in real time; a no-op when
	 * the ceiling was reserved.
	 * @param admission the admitted call
	 * @param outputTokens tokens produced since the last charge
	 */
	public synchronized void chargeProduced(Admission admission, long outputTokens) {
		if (!current(admission) || admission.settled || admission.reservedOutput() > 0) {
			return;
		}
		long amount = outputTokens * admission.burndown();
		chargeOutput(admission.model(), amount);
		admission.chargedOutput += amount;
	}

	/**
	 * Settles the call's output: the reservation is corrected to the actual output, times
	 * the burndown; at most once.
	 * @param admission the admitted call
	 * @param outputTokens the output the call produced in all
	 */
	public synchronized void settle(Admission admission, long outputTokens) {
		if (!current(admission) || admission.settled) {
			return;
		}
		admission.settled = true;
		long actual = outputTokens * admission.burndown();
		long target = (admission.reservedOutput() > 0 && !admission.refundUnused())
				? Math.max(admission.reservedOutput(), actual) : actual;
		chargeOutput(admission.model(), target - admission.chargedOutput);
		admission.chargedOutput = target;
	}

	private void chargeOutput(String model, long amount) {
		long now = this.clock.nanoTime();
		for (Pool scope : List.of(pool(model), this.account)) {
			for (Dimension dimension : List.of(Dimension.TOKENS_PER_MINUTE, Dimension.OUTPUT_TOKENS_PER_MINUTE,
					Dimension.TOKENS_PER_DAY)) {
				Meter meter = scope.meter(dimension);
				if (meter != null) {
					meter.take(amount, now);
				}
			}
		}
	}

	/**
	 * Whether the call was admitted on the books as they are now, that is since the last
	 * {@link #reset()}; an older call's settlement and release are ignored.
	 * @param admission the admission
	 * @return true if admitted and not reset since
	 */
	public synchronized boolean current(Admission admission) {
		return admission.admitted() && admission.generation() == this.generation;
	}

	/**
	 * Gives the call's concurrency slot back; at most once.
	 * @param admission the admitted call
	 */
	public synchronized void release(Admission admission) {
		if (!current(admission) || admission.released) {
			return;
		}
		admission.released = true;
		long now = this.clock.nanoTime();
		for (Pool scope : List.of(pool(admission.model()), this.account)) {
			Meter gate = scope.meter(Dimension.CONCURRENT_REQUESTS);
			if (gate != null) {
				gate.take(-1, now);
			}
		}
	}

	/**
	 * The current state of each meter of a scope.
	 * @param scope a model id, or {@link #ACCOUNT}
	 * @return states by dimension
	 */
	public synchronized Map<Dimension, DimensionState> scopeStates(String scope) {
		long now = this.clock.nanoTime();
		catchUpTeams(now);
		Pool pool = ACCOUNT.equals(scope) ? this.account : pool(scope);
		Map<Dimension, DimensionState> states = new EnumMap<>(Dimension.class);
		pool.meters().forEach((meter) -> states.put(meter.dimension(), meter.state(pool.scope(), now)));
		return states;
	}

	private Map<Dimension, DimensionState> states(Pool pool, long now) {
		Map<Dimension, DimensionState> states = new EnumMap<>(Dimension.class);
		for (Pool scope : List.of(pool, this.account)) {
			for (Meter meter : scope.meters()) {
				DimensionState state = meter.state(scope.scope(), now);
				states.merge(meter.dimension(), state,
						(current, candidate) -> (candidate.remaining() < current.remaining()) ? candidate : current);
			}
		}
		return Map.copyOf(states);
	}

	/**
	 * Charges teams to per-day caps; their per-minute spending is already in the refill
	 * rates.
	 */
	private void catchUpTeams(long now) {
		for (BackgroundTeam team : this.teams) {
			long[] due = team.accrue(now);
			if (due[0] > 0 || due[1] > 0) {
				for (Pool scope : List.of(pool(team.model()), this.account)) {
					scope.chargeDays(due[0], due[1]);
				}
			}
		}
	}

	/**
	 * Refills every meter, clears per-day counts and in-flight slots, restarts teams, and
	 * detaches calls still in flight from the new books.
	 */
	public synchronized void reset() {
		long now = this.clock.nanoTime();
		this.generation++;
		this.pools.clear();
		this.teams.forEach((team) -> team.restart(now));
		this.account = newPool(ACCOUNT, this.accountLimits, true);
	}

}
