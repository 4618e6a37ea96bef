package dev.llmquota.core;

import java.time.Instant;
import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * One (provider entry, model) at run time: the model's buckets and in-flight gates, tied
 * to its account. A call takes from both in one atomic decision.
 */
public final class Pool {

	private final Account account;

	private final PoolSpec spec;

	private final QuotaSettings settings;

	/** The configured limits plus those learned from the provider's headers. */
	private volatile Limits limits;

	private volatile List<BucketSpec> buckets;

	private volatile List<BucketSpec> slots;

	/**
	 * The limits learned from the provider's headers, not configured: replaced whole,
	 * under this, so every answer's headers read it without a lock.
	 */
	private volatile Set<Dimension> learned = Set.of();

	private final String sanctionsKey;

	/** How long a report that names no reset holds. */
	private static final long REPORT_WITHOUT_RESET = TimeUnit.MINUTES.toNanos(1);

	private final Map<Dimension, Reported> server = new ConcurrentHashMap<>();

	private final EstimateDrift drift = new EstimateDrift();

	private final PoolStats stats = new PoolStats();

	private final Sanctions sanctions = new Sanctions();

	private final Gates gates;

	private final LatencyEstimate latency;

	/**
	 * Until when a shared store last said this pool's books are taken (a booking ahead or
	 * a refusal's wait), on the monotonic clock: this replica's view of the shared books,
	 * which a route weighs.
	 */
	private volatile long sharedBusyUntil = Long.MIN_VALUE;

	Pool(Account account, PoolSpec spec, QuotaSettings settings) {
		this.account = account;
		this.spec = spec;
		this.settings = settings;
		ProviderSpec provider = account.provider();
		this.limits = spec.limits();
		this.buckets = Buckets.of(provider, BucketSpec.Scope.POOL, scopeKey(), spec.limits(), spec.burstWindow(),
				settings);
		this.slots = Buckets.slots(provider, BucketSpec.Scope.POOL, scopeKey(), spec.limits(), settings);
		this.sanctionsKey = Buckets.key(provider, scopeKey(), "hold");
		long expected = spec.expectedLatency().toNanos();
		this.latency = new LatencyEstimate(expected);
		this.gates = new Gates(spec.limits(), settings, provider.inFlightGate(), expected);
	}

	/** The tokens a call reserves in this pool's token buckets, as they charge them. */
	long reservedTokens(Demand demand) {
		return Dimension.TOKENS_PER_MINUTE.unitsAtAdmission(demand, this.spec.accounting());
	}

	/**
	 * Returns the provider entry's id.
	 * @return the provider entry
	 */
	public String provider() {
		return this.account.provider().id();
	}

	/**
	 * Returns the provider entry's region label.
	 * @return the region
	 */
	public String region() {
		return this.account.provider().region();
	}

	/**
	 * Returns the model id.
	 * @return the model
	 */
	public String model() {
		return this.spec.model();
	}

	/**
	 * Returns the pool's settings.
	 * @return the settings
	 */
	public PoolSpec spec() {
		return this.spec;
	}

	/**
	 * Returns the account this pool draws from too.
	 * @return the account
	 */
	public Account account() {
		return this.account;
	}

	/**
	 * Returns the pool's own buckets.
	 * @return the buckets, one per limited rate or daily dimension
	 */
	public List<BucketSpec> buckets() {
		return this.buckets;
	}

	/**
	 * Returns the pool's limits: configured, and learned from the provider where nobody
	 * configured one.
	 * @return the limits
	 */
	public Limits limits() {
		return this.limits;
	}

	/**
	 * Returns whether a dimension's limit was learned from the provider's headers.
	 * @param dimension the dimension
	 * @return whether learned, rather than configured or set by an operator
	 */
	public boolean learned(Dimension dimension) {
		return this.learned.contains(dimension);
	}

	/**
	 * Returns the in-flight slots the pool shares with other processes through a shared
	 * store.
	 * @return the slots, empty unless {@code concurrent-requests} is configured
	 */
	public List<BucketSpec> slots() {
		return this.slots;
	}

	/**
	 * Returns the store key under which processes sharing a store share this pool's hold.
	 * @return the key
	 */
	public String sanctionsKey() {
		return this.sanctionsKey;
	}

	/**
	 * Returns the pool's own bucket of a dimension.
	 * @param dimension the dimension
	 * @return the bucket, or {@code null} if the pool does not limit that dimension
	 */
	public BucketSpec bucket(Dimension dimension) {
		for (BucketSpec bucket : this.buckets) {
			if (bucket.dimension() == dimension) {
				return bucket;
			}
		}
		return null;
	}

	/**
	 * Returns what the provider's headers said last, per dimension.
	 * @return the latest server reports
	 */
	public Map<Dimension, ServerLimit> serverLimits() {
		Map<Dimension, ServerLimit> copy = new EnumMap<>(Dimension.class);
		this.server.forEach((dimension, reported) -> copy.put(dimension, reported.limit()));
		return Collections.unmodifiableMap(copy);
	}

	/**
	 * Returns what the provider's headers said last and still holds: a report until the
	 * reset it names, or, naming none, for a minute after it came (a per-minute window
	 * has refilled by then).
	 * @param nanoTime the monotonic time now
	 * @param now the wall-clock time now
	 * @return the reports that still hold
	 */
	public Map<Dimension, ServerLimit> currentServerLimits(long nanoTime, Instant now) {
		Map<Dimension, ServerLimit> current = new EnumMap<>(Dimension.class);
		this.server.forEach((dimension, reported) -> {
			Instant reset = reported.limit().reset();
			if ((reset != null) ? now.isBefore(reset) : nanoTime - reported.atNanos() < REPORT_WITHOUT_RESET) {
				current.put(dimension, reported.limit());
			}
		});
		return Collections.unmodifiableMap(current);
	}

	/**
	 * Returns how far this pool's input estimates are from the provider's counts.
	 * @return the drift
	 */
	public EstimateDrift drift() {
		return this.drift;
	}

	/**
	 * Returns the provider's penalties and exhaustion on this pool; the engine's own.
	 * @return the hold
	 */
	Sanctions sanctions() {
		return this.sanctions;
	}

	/**
	 * Returns what this pool's calls looked like: a read-only view, only the engine
	 * records into it.
	 * @return the statistics
	 */
	public PoolStats stats() {
		return this.stats;
	}

	/**
	 * Returns the whole-call latency the in-flight bounds use now.
	 * @return the latency in nanoseconds
	 */
	public long latencyNanos() {
		return this.latency.nanos();
	}

	/**
	 * Keeps a provider's report for the endpoint and gauges: the latest, unless the one
	 * held says less is left and refills later (an older report arriving last, a long
	 * call's: the bucket only refills between the two, so the tighter one is nearer).
	 */
	void remember(ServerLimit report, long nanoTime) {
		this.server.merge(report.dimension(), new Reported(report, nanoTime),
				(held, latest) -> tighter(held.limit(), latest.limit()) ? held : latest);
	}

	private static boolean tighter(ServerLimit held, ServerLimit latest) {
		return held.remaining() != null && latest.remaining() != null && held.reset() != null && latest.reset() != null
				&& held.remaining() < latest.remaining() && held.reset().isAfter(latest.reset())
				&& Objects.equals(held.limit(), latest.limit());
	}

	/** A provider's report, and when it came (monotonic). */
	private record Reported(ServerLimit limit, long atNanos) {

	}

	/**
	 * Enforces a limit nobody configured, as the provider last reported it (a higher tier
	 * is followed without a restart); a configured limit, or one an operator set, stands.
	 * @return whether the pool's limits changed
	 */
	boolean learn(Dimension dimension, long limit) {
		if (!learns(dimension, limit)) {
			// unchanged, or not the provider's to set, as nearly every answer says: no
			// lock
			return false;
		}
		synchronized (this) {
			if (!learns(dimension, limit)) {
				return false;
			}
			set(dimension, limit);
			this.learned = with(this.learned, dimension, true);
			return true;
		}
	}

	private boolean learns(Dimension dimension, long limit) {
		Long current = this.limits.asMap().get(dimension);
		return limit >= 1 && (current == null || (current != limit && this.learned.contains(dimension)));
	}

	private static Set<Dimension> with(Set<Dimension> dimensions, Dimension dimension, boolean in) {
		EnumSet<Dimension> copy = EnumSet.noneOf(Dimension.class);
		copy.addAll(dimensions);
		if (in) {
			copy.add(dimension);
		}
		else {
			copy.remove(dimension);
		}
		return Collections.unmodifiableSet(copy);
	}

	/**
	 * Sets a rate or daily limit, as an operator's change at run time: it stands over
	 * what the provider reports.
	 */
	synchronized void change(Dimension dimension, long limit) {
		set(dimension, limit);
		this.learned = with(this.learned, dimension, false);
	}

	private void set(Dimension dimension, long limit) {
		this.limits = this.limits.with(dimension, limit);
		ProviderSpec provider = this.account.provider();
		this.buckets = Buckets.of(provider, BucketSpec.Scope.POOL, scopeKey(), this.limits, this.spec.burstWindow(),
				this.settings);
		this.slots = Buckets.slots(provider, BucketSpec.Scope.POOL, scopeKey(), this.limits, this.settings);
	}

	private String scopeKey() {
		return "pool:" + this.spec.model();
	}

	/**
	 * Returns what a call takes from every bucket of the pool and the account.
	 * @param demand the call's demand
	 * @return the charges, pool first
	 */
	public List<Charge> charges(Demand demand) {
		List<BucketSpec> own = this.buckets;
		List<BucketSpec> shared = this.account.buckets();
		Charge[] charges = new Charge[own.size() + shared.size()];
		add(charges, 0, own, demand);
		add(charges, own.size(), shared, demand);
		// immutable: a booking keeps the list as it is, without a copy
		return List.of(charges);
	}

	private void add(Charge[] charges, int from, List<BucketSpec> buckets, Demand demand) {
		Accounting accounting = this.spec.accounting();
		for (int i = 0; i < buckets.size(); i++) {
			BucketSpec bucket = buckets.get(i);
			charges[from + i] = new Charge(bucket, bucket.dimension().unitsAtAdmission(demand, accounting));
		}
	}

	List<InFlightGate> gates() {
		return this.gates.all();
	}

	/**
	 * Returns the output a call is expected to generate, in units (burndown applied):
	 * where output is reserved at admission, its ceiling; where it is charged only as it
	 * is generated, the pool's mean observed output once calls have completed, and before
	 * that the ceiling capped at what the output bucket holds.
	 * @param demand the call's demand
	 * @return the expected output units
	 */
	long expectedOutput(Demand demand) {
		Accounting accounting = this.spec.accounting();
		long ceiling = accounting.burnedOutput(demand.outputCeiling());
		if (accounting.reserveMaxTokens()) {
			return ceiling;
		}
		long observed = this.stats.meanOutput();
		if (observed >= 0) {
			return accounting.burnedOutput(observed);
		}
		for (List<BucketSpec> buckets : List.of(this.buckets, this.account.buckets())) {
			for (BucketSpec bucket : buckets) {
				if (bucket.dimension() == Dimension.OUTPUT_TOKENS_PER_MINUTE) {
					return Math.min(ceiling, bucket.capacity());
				}
			}
		}
		return ceiling;
	}

	/**
	 * Sizes the pool's in-flight gates again from its current limits and observed
	 * latency; called under the account queue's lock when either changes.
	 * @param settings the engine's settings
	 */
	void resizeGates(QuotaSettings settings) {
		this.gates.resize(this.limits, settings, this.latency.nanos());
	}

	long sharedBusyUntil() {
		return this.sharedBusyUntil;
	}

	void sharedBusyUntil(long at) {
		this.sharedBusyUntil = at;
	}

	LatencyEstimate latency() {
		return this.latency;
	}

	@Override
	public String toString() {
		return "Pool[" + provider() + "/" + region() + "/" + model() + "]";
	}

}
