package dev.llmquota.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

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

	private final Map<String, Provider> providers = new LinkedHashMap<>();

	private final ReentrantLock unlistedLock = new ReentrantLock();

	/** Pools of unlisted models, least recently used first. */
	private final LinkedHashMap<String, Pool> unlisted = new LinkedHashMap<>(16, 0.75f, true);

	private volatile boolean closed;

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
		config.providers().values().forEach((spec) -> this.providers.put(spec.id(), new Provider(spec)));
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
		Provider entry = this.providers.get(provider);
		if (entry == null) {
			throw new IllegalArgumentException("No provider entry '" + provider + "' under llm.quota.providers");
		}
		Pool pool = entry.configured.get(model);
		if (pool != null) {
			return pool;
		}
		String key = provider + '\u0000' + model;
		this.unlistedLock.lock();
		try {
			pool = this.unlisted.get(key);
			if (pool == null) {
				PoolSpec spec = entry.spec.template().orElse(entry.spec.unlisted()).forModel(model);
				pool = new Pool(entry.account, spec, this.config.settings());
				this.unlisted.put(key, pool);
				if (this.unlisted.size() > this.config.settings().maxPools()) {
					// The least recently used pool goes with its buckets; calls it
					// admitted keep their permits.
					Pool evicted = this.unlisted.remove(this.unlisted.keySet().iterator().next());
					this.store.forget(evicted.buckets());
				}
			}
			return pool;
		}
		finally {
			this.unlistedLock.unlock();
		}
	}

	/**
	 * Returns every pool: configured ones, then those made for unlisted models.
	 * @return the pools
	 */
	public List<Pool> pools() {
		List<Pool> pools = new ArrayList<>();
		this.providers.values().forEach((entry) -> entry.configured.values().stream().distinct().forEach(pools::add));
		this.unlistedLock.lock();
		try {
			pools.addAll(this.unlisted.values());
		}
		finally {
			this.unlistedLock.unlock();
		}
		return pools;
	}

	/**
	 * Returns every provider entry's account.
	 * @return the accounts
	 */
	public Collection<Account> accounts() {
		return this.providers.values().stream().map((entry) -> entry.account).toList();
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
	 * authority: each reported dimension's bucket (the pool's, else the account's) is
	 * lowered at once to {@code remaining - (1 - headroom) x limit}, never raised; a rate
	 * limit nobody configured is learned and enforced from then on.
	 * @param pool the pool the call went to
	 * @param reports what the headers said
	 */
	public void observe(Pool pool, List<ServerLimit> reports) {
		if (reports.isEmpty()) {
			return;
		}
		long now = this.clock.nanoTime();
		double headroom = this.config.settings().headroom();
		for (ServerLimit report : reports) {
			pool.remember(report);
			BucketSpec bucket = pool.bucket(report.dimension());
			if (bucket == null && report.limit() != null && report.dimension().kind() == Dimension.Kind.RATE) {
				pool.learn(report.dimension(), report.limit());
				bucket = pool.bucket(report.dimension());
			}
			Long limit = (report.limit() != null) ? report.limit() : limitOf(pool, bucket);
			if (bucket == null || report.remaining() == null || limit == null) {
				continue;
			}
			long reserve = (long) Math.ceil((1 - headroom) * limit);
			this.store.lowerTo(bucket, report.remaining() - reserve, now);
		}
	}

	private static Long limitOf(Pool pool, BucketSpec bucket) {
		if (bucket == null) {
			return null;
		}
		Limits limits = (bucket.scope() == BucketSpec.Scope.POOL) ? pool.limits() : pool.account().provider().account();
		return limits.asMap().get(bucket.dimension());
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
	 * Returns how many calls wait for admission on an account.
	 * @param account the account
	 * @return the number of waiting calls
	 */
	public int waiting(Account account) {
		return account.queue().waiting();
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
	 * Shuts down: waiting calls fail with {@link dev.llmquota.QuotaEngineClosedException}
	 * and every slot is released.
	 */
	@Override
	public void close() {
		this.closed = true;
		this.providers.values().forEach((entry) -> entry.account.queue().close());
	}

	private final class Provider {

		private final ProviderSpec spec;

		private final Account account;

		private final Map<String, Pool> configured = new HashMap<>();

		Provider(ProviderSpec spec) {
			this.spec = spec;
			QuotaSettings settings = QuotaEngine.this.config.settings();
			long expected = spec.models()
				.values()
				.stream()
				.mapToLong((model) -> model.expectedLatency().toNanos())
				.max()
				.orElse(spec.template().orElse(spec.unlisted()).expectedLatency().toNanos());
			this.account = new Account(spec, settings, QuotaEngine.this.store, QuotaEngine.this.clock, expected);
			spec.models().values().forEach((model) -> {
				Pool pool = new Pool(this.account, model, settings);
				this.configured.put(model.model(), pool);
				model.aliases().forEach((alias) -> this.configured.put(alias, pool));
			});
		}

	}

}
