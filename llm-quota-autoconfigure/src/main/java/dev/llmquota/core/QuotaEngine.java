package dev.llmquota.core;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;

import reactor.core.publisher.Mono;

/**
 * Admits calls to LLM providers only when every bucket of their pool and account has
 * room. Holds one pool per configured model (and per unlisted model, up to
 * {@code max-pools}), one account per provider entry, and the store where bucket state
 * lives.
 */
public final class QuotaEngine implements AutoCloseable {

	private final QuotaConfig config;

	private final QuotaStore store;

	private final QuotaClock clock;

	private final Pools pools;

	private final ProviderSignals signals;

	private volatile boolean closed;

	private final Listeners events = new Listeners();

	/** The one thread that books calls in a shared store, or {@code null}. */
	private final StoreThread storeThread;

	/**
	 * Creates an engine.
	 * @param config the configuration
	 * @param store where bucket state lives
	 * @param clock the source of time and timers
	 */
	public QuotaEngine(QuotaConfig config, QuotaStore store, QuotaClock clock) {
		this.config = config;
		this.store = store;
		this.clock = clock;
		this.storeThread = store.shared() ? new StoreThread() : null;
		this.pools = new Pools(config, store, clock, this.events, this.storeThread);
		this.signals = new ProviderSignals(config, store, clock, this.events, this.pools);
		this.pools.entries()
			.forEach((entry) -> store.watchLimits(entry.account.limitsKey(),
					(field, limit) -> this.pools.limitPublished(entry.spec.id(), field, limit)));
	}

	/**
	 * Returns the configuration.
	 * @return the configuration
	 */
	public QuotaConfig config() {
		return this.config;
	}

	/**
	 * Returns the clock.
	 * @return the clock
	 */
	public QuotaClock clock() {
		return this.clock;
	}

	/**
	 * Returns the store.
	 * @return the store
	 */
	public QuotaStore store() {
		return this.store;
	}

	/**
	 * Returns the pool of a model of a provider entry: the configured one (aliases
	 * included), or one made for an unlisted model from the {@code default} template.
	 * @param provider the provider entry's id
	 * @param model the model id
	 * @return the pool
	 * @throws IllegalArgumentException if no provider entry has that id
	 */
	public Pool pool(String provider, String model) {
		return this.pools.pool(provider, model);
	}

	/**
	 * Returns every pool: configured ones, then those made for unlisted models.
	 * @return the pools
	 */
	public List<Pool> pools() {
		return this.pools.pools();
	}

	/**
	 * Returns every provider entry's account.
	 * @return the accounts
	 */
	public Collection<Account> accounts() {
		return this.pools.entries().stream().map((entry) -> entry.account).toList();
	}

	/**
	 * Waits, without blocking a thread, until the call is admitted on every bucket and
	 * gate of its pool and account. Cancelling the returned {@link Mono} before it
	 * completes leaves the queue and takes nothing.
	 * @param pool the pool
	 * @param demand what the call asks
	 * @param priority the call's class, or {@code null} for the model's default
	 * @param maxWait the longest wait, or {@code null} for {@code llm.quota.max-wait}
	 * @return a {@link Mono} of the permit, or of
	 * {@link dev.llmquota.QuotaWaitTimeoutException},
	 * {@link dev.llmquota.BudgetExhaustedException} or
	 * {@link dev.llmquota.QuotaEngineClosedException}
	 */
	public Mono<QuotaPermit> acquire(Pool pool, Demand demand, Priority priority, Duration maxWait) {
		Mode mode = pool.spec().mode();
		if (mode == Mode.OFF) {
			return Mono.fromSupplier(() -> QuotaPermit.off(pool, demand, this.clock));
		}
		if (mode == Mode.SHADOW) {
			return Mono.fromSupplier(() -> {
				// the call goes at once; its twin waits as enforce mode would have
				ShadowCall shadow = new ShadowCall(pool, this.clock, this.events);
				shadow.waiting(enforce(pool, demand, priority, maxWait).subscribe(shadow::admitted, shadow::failed));
				return QuotaPermit.shadow(pool, demand, shadow, this.clock);
			})
				// a caller gone as it was made: its twin gives back what it holds
				.doOnDiscard(QuotaPermit.class, QuotaPermit::cancel);
		}
		return enforce(pool, demand, priority, maxWait);
	}

	/**
	 * Admits a call at once when nothing stands before it, without a {@link Mono}: its
	 * pool enforces on this process's books, no call of its account waits, no provider
	 * penalty or spent quota holds it, and its gates and buckets have room now. Returns
	 * {@code null} otherwise, and takes nothing: then {@link #acquire} waits for it, in
	 * order.
	 * @param pool the pool
	 * @param demand what the call asks
	 * @param priority the call's class, or {@code null} for the model's default
	 * @return the permit, or {@code null} when the call must go through the queue
	 */
	public QuotaPermit tryAcquire(Pool pool, Demand demand, Priority priority) {
		if (pool.spec().mode() != Mode.ENFORCE) {
			return null;
		}
		Priority effectivePriority = (priority != null) ? priority : pool.spec().priority();
		return pool.account()
			.queue()
			.tryAdmit(new Waiter(pool, demand, effectivePriority, this.clock.nanoTime(), 0, null));
	}

	/**
	 * Returns how soon a call would be admitted on a pool were it asked now, as this
	 * process sees the books (with a shared store: what the store last told the calls
	 * waiting here), behind the calls already waiting, taking nothing: what a route
	 * compares across its targets. A pool in shadow mode answers as enforcing would (its
	 * twins' books), though it holds no call back; one that is off is free.
	 * @param pool the pool
	 * @param demand what the call would ask
	 * @param priority its class, or {@code null} for the model's default
	 * @return the headroom
	 */
	public Headroom headroom(Pool pool, Demand demand, Priority priority) {
		// this process's view alone: a route asks it on the caller's thread, for every
		// target, and never waits on a shared store
		QuotaState state = localState(pool);
		if (pool.spec().mode() == Mode.OFF) {
			return new Headroom(0, state, null);
		}
		Priority effectivePriority = (priority != null) ? priority : pool.spec().priority();
		Headroom headroom = pool.account()
			.queue()
			.headroom(new Waiter(pool, demand, effectivePriority, this.clock.nanoTime(), 0, null));
		return new Headroom(headroom.waitNanos(), state, headroom.binding());
	}

	private Mono<QuotaPermit> enforce(Pool pool, Demand demand, Priority priority, Duration maxWait) {
		Priority effectivePriority = (priority != null) ? priority : pool.spec().priority();
		long maxWaitNanos = ((maxWait != null) ? maxWait : this.config.settings().maxWait()).toNanos();
		AdmissionQueue queue = pool.account().queue();
		return Mono.create((sink) -> {
			Waiter waiter = new Waiter(pool, demand, effectivePriority, this.clock.nanoTime(), maxWaitNanos, sink);
			sink.onCancel(() -> queue.cancel(waiter));
			queue.submit(waiter);
		});
	}

	/**
	 * Takes what the provider's rate-limit headers said into the books. The server is the
	 * authority: each reported dimension's bucket of the pool is lowered at once to
	 * {@code remaining - (1 - headroom) x limit}, never raised; a rate limit the pool
	 * does not have is learned and enforced from then on. Headers describe the model's
	 * limits, so the account's buckets are left to the local books.
	 * @param pool the pool the call went to
	 * @param reports what the headers said
	 */
	public void observe(Pool pool, List<ServerLimit> reports) {
		this.signals.observe(pool, reports);
	}

	/**
	 * Holds a dimension after a provider rate-limit answer: the pool admits nothing until
	 * the wait has passed, so its other callers wait too instead of stampeding.
	 * @param pool the pool
	 * @param dimension the dimension the provider named
	 * @param wait the provider's wait
	 */
	public void penalize(Pool pool, Dimension dimension, Duration wait) {
		this.signals.penalize(pool, dimension, wait);
	}

	/**
	 * Takes a provider's rate-limit answer: the pool is held for the wait (so its other
	 * callers wait too instead of stampeding), and the answer is remembered for the
	 * endpoint and counted.
	 * @param pool the pool
	 * @param dimension the dimension the provider named, or {@code null} if unknown
	 * @param wait the provider's wait
	 */
	public void rateLimited(Pool pool, Dimension dimension, Duration wait) {
		this.signals.rateLimited(pool, dimension, wait);
	}

	/**
	 * Marks an administrative quota spent: calls fail fast until the reset, or, where
	 * none is known, until a probe call succeeds.
	 * @param pool the pool the answer came for
	 * @param wholeAccount whether the answer applies to every model of the entry
	 * (billing)
	 * @param dimension the dimension concerned, or {@code null}
	 * @param reason what the provider said
	 * @param until when the quota comes back, or {@code null} if unknown
	 */
	public void exhaust(Pool pool, boolean wholeAccount, Dimension dimension, String reason, Instant until) {
		this.signals.exhaust(pool, wholeAccount, dimension, reason, until);
	}

	/**
	 * A call succeeded: if it was admitted after its pool or account was marked exhausted
	 * (a probe), the quota is back.
	 * @param permit the call's permit
	 */
	public void succeeded(QuotaPermit permit) {
		this.signals.succeeded(permit);
	}

	/**
	 * Lifts an exhaustion by an operator's hand (a quota raised or credit added).
	 * @param provider the provider entry
	 * @param model the model, or {@code null} for the account and every pool of the entry
	 * @return whether anything was exhausted
	 * @throws IllegalArgumentException for a model with no pool, or a model while its
	 * whole account is exhausted (its reset would change nothing)
	 */
	public boolean resetExhausted(String provider, String model) {
		return this.signals.resetExhausted(provider, model);
	}

	/**
	 * Checks, before anything changes, that {@link #resetExhausted} of a model would lift
	 * something.
	 * @param provider the provider entry
	 * @param model the model
	 * @throws IllegalArgumentException for a model with no pool, or a model while its
	 * whole account is exhausted
	 */
	public void checkReset(String provider, String model) {
		this.signals.checkReset(provider, model);
	}

	/**
	 * Returns a pool's state: its own hold, or its account's, whichever is worse; with a
	 * store shared by many processes, a penalty or a spent quota another process heard
	 * counts too, as it holds this process's calls (read from the store: for the endpoint
	 * and health, not for a call's path).
	 * @param pool the pool
	 * @return the state
	 */
	public QuotaState state(Pool pool) {
		QuotaState shared = worse(shared(pool.sanctionsKey()), shared(pool.account().sanctionsKey()));
		return worse(localState(pool), shared);
	}

	/** A pool's state as this process heard it: its hold, or its account's. */
	private QuotaState localState(Pool pool) {
		long now = this.clock.nanoTime();
		return worse(pool.sanctions().state(now), pool.account().sanctions().state(now));
	}

	/**
	 * Returns an account's state, with what other processes sharing the store heard.
	 * @param account the account
	 * @return the state
	 */
	public QuotaState state(Account account) {
		return worse(account.sanctions().state(this.clock.nanoTime()), shared(account.sanctionsKey()));
	}

	/**
	 * Returns a provider's penalty in force on a pool that another process sharing the
	 * store heard, as it binds, for the endpoint.
	 * @param pool the pool
	 * @return the penalty's dimension and scope, or {@code null} if none, if its refusal
	 * named no dimension, or if the store is this process's own
	 */
	public Binding.Bound penalizedElsewhere(Pool pool) {
		if (!this.store.shared()) {
			return null;
		}
		SharedHold own = this.store.hold(pool.sanctionsKey());
		SharedHold account = this.store.hold(pool.account().sanctionsKey());
		long ownNanos = (own != null && own.penalized() != null) ? own.penaltyNanos() : 0;
		long accountNanos = (account != null && account.penalized() != null) ? account.penaltyNanos() : 0;
		if (ownNanos <= 0 && accountNanos <= 0) {
			return null;
		}
		return (ownNanos >= accountNanos) ? Binding.named(pool, own.penalized())
				: new Binding.Bound(BucketSpec.Scope.ACCOUNT, account.penalized());
	}

	private QuotaState shared(String hold) {
		SharedHold held = this.store.shared() ? this.store.hold(hold) : null;
		return (held != null) ? held.state() : QuotaState.OK;
	}

	private static QuotaState worse(QuotaState one, QuotaState other) {
		return (one.ordinal() > other.ordinal()) ? one : other;
	}

	/**
	 * Registers an observer of admissions and usage (metrics); it is told of every pool
	 * that exists now.
	 * @param listener the observer
	 */
	public void addListener(QuotaEvents listener) {
		this.events.add(listener);
		pools().forEach(listener::poolCreated);
	}

	/**
	 * Removes an observer added with {@link #addListener(QuotaEvents)}: it is told
	 * nothing more.
	 * @param listener the observer
	 */
	public void removeListener(QuotaEvents listener) {
		this.events.remove(listener);
	}

	/**
	 * Compares an input estimate with the provider's count, so later estimates of the
	 * pool are corrected.
	 * @param pool the pool
	 * @param estimated the raw estimate
	 * @param actual the input the provider counted
	 */
	public void recordDrift(Pool pool, long estimated, long actual) {
		if (pool.spec().mode() == Mode.OFF) {
			return;
		}
		double ratio = pool.drift().record(estimated, actual);
		if (!Double.isNaN(ratio)) {
			this.events.drift(pool, ratio);
		}
	}

	/**
	 * Changes a rate, daily or concurrency limit at run time (a quota raised without a
	 * restart). With a store shared by many processes, every process applies it within
	 * about a second, and processes started later apply it too.
	 * @param provider the provider entry
	 * @param model the model, or {@code null} for the entry's account
	 * @param dimension the dimension
	 * @param limit the new published limit
	 * @throws IllegalArgumentException if the limit is not positive, or a concurrency
	 * limit is set where none was configured
	 */
	public void changeLimit(String provider, String model, Dimension dimension, long limit) {
		// published under the pool's own id: one field for one pool, whatever the case
		String named = this.pools.applyLimit(provider, model, dimension, limit);
		this.store.publishLimit(this.pools.entry(provider).account.limitsKey(),
				dimension.id() + '|' + ((named != null) ? named : ""), limit);
	}

	/**
	 * Returns what the books hold for a pool now.
	 * @param pool the pool
	 * @return the snapshot
	 */
	public PoolSnapshot snapshot(Pool pool) {
		return PoolSnapshot.of(pool, this.store, this.clock);
	}

	/**
	 * Returns the configured in-flight gate of a dimension ({@code concurrent-requests})
	 * of a pool or its account, without reading the store.
	 * @param pool the pool
	 * @param scope the pool's own gate or its account's
	 * @param dimension the dimension
	 * @return the gate's state, or {@code null} if none is configured there
	 */
	public PoolSnapshot.GateSnapshot gate(Pool pool, BucketSpec.Scope scope, Dimension dimension) {
		return pool.account().queue().read(() -> {
			for (InFlightGate gate : (scope == BucketSpec.Scope.POOL) ? pool.gates() : pool.account().gates()) {
				if (gate.dimension() == dimension && !gate.derived()) {
					return PoolSnapshot.of(gate, scope);
				}
			}
			return null;
		});
	}

	/**
	 * Returns how many calls wait for admission on an account.
	 * @param account the account
	 * @return the number of waiting calls
	 */
	public int waiting(Account account) {
		return account.queue().waiting();
	}

	/**
	 * Returns how many calls of a pool and class wait for admission (booked ahead in a
	 * shared store and waiting for their start included).
	 * @param pool the pool
	 * @param priority the class
	 * @return the number of waiting calls
	 */
	public int waiting(Pool pool, Priority priority) {
		return pool.account().queue().waiting(pool, priority);
	}

	/**
	 * Returns how many admitted calls of an account hold their slots.
	 * @param account the account
	 * @return the number of calls in flight
	 */
	public int inFlight(Account account) {
		return account.queue().inFlight();
	}

	/**
	 * Returns whether the engine was closed.
	 * @return whether closed
	 */
	public boolean isClosed() {
		return this.closed;
	}

	/**
	 * Waits until the store thread of a shared store has run every booking asked for so
	 * far, and those they asked for in turn: for tests that move a manual clock and then
	 * look, on either store, at what was admitted. A local store books on the caller's
	 * thread, so there is nothing to wait for.
	 */
	void awaitQuiet() {
		if (this.storeThread != null) {
			this.storeThread.awaitQuiet(
					() -> this.pools.entries().stream().anyMatch((entry) -> entry.account.queue().drainPending()));
		}
	}

	/**
	 * Shuts down: waiting calls fail with {@link dev.llmquota.QuotaEngineClosedException}
	 * and every slot is released.
	 */
	@Override
	public void close() {
		this.closed = true;
		this.pools.entries().forEach((entry) -> entry.account.queue().close());
		if (this.storeThread != null) {
			// a booking on its way back is given back before the store closes
			this.storeThread.close();
		}
	}

}
