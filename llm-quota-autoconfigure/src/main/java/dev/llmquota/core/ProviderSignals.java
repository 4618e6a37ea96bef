package dev.llmquota.core;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import dev.llmquota.core.kernel.Arith;

/**
 * What the provider's answers tell the engine: the limits its headers report, its
 * rate-limit waits, a spent quota and its return. Each goes into this process's books
 * and, with a store shared by many processes, to the other processes.
 */
final class ProviderSignals {

	private final QuotaConfig config;

	private final QuotaStore store;

	private final QuotaClock clock;

	private final QuotaEvents events;

	private final Pools pools;

	ProviderSignals(QuotaConfig config, QuotaStore store, QuotaClock clock, QuotaEvents events, Pools pools) {
		this.config = config;
		this.store = store;
		this.clock = clock;
		this.events = events;
		this.pools = pools;
	}

	void observe(Pool pool, List<ServerLimit> reports) {
		if (reports.isEmpty() || pool.spec().mode() == Mode.OFF) {
			return;
		}
		long now = this.clock.nanoTime();
		double headroom = this.config.settings().headroom();
		for (ServerLimit report : reports) {
			pool.remember(report, now);
			if (report.limit() != null && report.dimension().kind() == Dimension.Kind.RATE
					&& pool.learn(report.dimension(), report.limit())) {
				this.pools.limitsChanged(pool);
			}
			BucketSpec bucket = pool.bucket(report.dimension());
			// the share kept for others is of the smaller of the reported limit
			// and this pool's own: a limit reported far above it (an
			// organisation's whole limit, or a lie) must not take the bucket
			// into a debt its refill never repays
			Long limit = pool.limits().asMap().get(report.dimension());
			if (report.limit() != null && (limit == null || report.limit() < limit)) {
				limit = report.limit();
			}
			if (bucket == null || report.remaining() == null || limit == null) {
				continue;
			}
			long reserve = (long) Math.ceil((1 - headroom) * limit);
			this.store.lowerTo(bucket, report.remaining() - reserve, now);
		}
	}

	void penalize(Pool pool, Dimension dimension, Duration wait) {
		if (pool.spec().mode() == Mode.OFF) {
			return;
		}
		// a 429 that named no dimension holds the pool all the same, naming none
		pool.sanctions().penalize(dimension, Arith.saturatedAdd(this.clock.nanoTime(), wait.toNanos()));
		// other processes sharing the store wait too, instead of each finding out alone
		this.store.penalize(pool.sanctionsKey(), dimension, wait.toNanos());
	}

	void rateLimited(Pool pool, Dimension dimension, Duration wait) {
		if (pool.spec().mode() == Mode.OFF) {
			return;
		}
		penalize(pool, dimension, wait);
		pool.stats().rateLimited(new PoolStats.RateLimited(this.clock.instant(), dimension, wait));
		this.events.throttled(pool, dimension);
	}

	void exhaust(Pool pool, boolean wholeAccount, Dimension dimension, String reason, Instant until) {
		if (pool.spec().mode() == Mode.OFF) {
			return;
		}
		long now = this.clock.nanoTime();
		long nextProbe = Arith.saturatedAdd(now, this.config.settings().exhaustedProbeInterval().toNanos());
		Sanctions sanctions = wholeAccount ? pool.account().sanctions() : pool.sanctions();
		Sanctions.Exhaustion exhaustion = Sanctions.Exhaustion.until(dimension, reason, until, now,
				this.clock.instant(), nextProbe);
		sanctions.exhaust(exhaustion);
		this.store.exhaust(wholeAccount ? pool.account().sanctionsKey() : pool.sanctionsKey(), dimension, reason,
				(until != null) ? Duration.ofNanos(exhaustion.untilNanos() - now) : null,
				this.config.settings().exhaustedProbeInterval().toNanos());
	}

	void succeeded(QuotaPermit permit) {
		boolean pool = permit.pool().sanctions().succeeded(permit.admittedAt());
		boolean account = permit.pool().account().sanctions().succeeded(permit.admittedAt());
		// a call through a spent quota (a shared store's probe, or this process's own,
		// as its local books let one through while Redis did not answer): it is back,
		// for everyone
		if (pool || permit.booking().probe()) {
			this.store.clearExhaustion(permit.pool().sanctionsKey());
		}
		if (account || permit.booking().probe()) {
			this.store.clearExhaustion(permit.pool().account().sanctionsKey());
		}
	}

	/**
	 * Checks that an operator's reset of a model would lift something.
	 * @return the model's pool
	 * @throws IllegalArgumentException for a model with no pool, or while its whole
	 * account is exhausted (the model's calls would still fail, through their account)
	 */
	Pool checkReset(String provider, String model) {
		Pools.Entry entry = this.pools.entry(provider);
		Pool pool = this.pools.existingPool(entry, provider, model);
		SharedHold shared = this.store.shared() ? this.store.hold(entry.account.sanctionsKey()) : null;
		if (entry.account.sanctions().exhaustion(this.clock.nanoTime()) != null
				|| (shared != null && shared.exhausted())) {
			throw new IllegalArgumentException(
					"Provider '" + provider + "''s whole account is exhausted (a billing" + " answer, not one of "
							+ model + "'s quotas): reset it without 'model', which lifts it for every" + " model");
		}
		return pool;
	}

	boolean resetExhausted(String provider, String model) {
		Pools.Entry entry = this.pools.entry(provider);
		boolean had;
		if (model == null) {
			had = entry.account.sanctions().clearExhaustion();
			this.store.clearExhaustion(entry.account.sanctionsKey());
			for (Pool pool : this.pools.pools()) {
				if (pool.account() == entry.account) {
					had |= pool.sanctions().clearExhaustion();
					this.store.clearExhaustion(pool.sanctionsKey());
				}
			}
		}
		else {
			Pool pool = checkReset(provider, model);
			had = pool.sanctions().clearExhaustion();
			this.store.clearExhaustion(pool.sanctionsKey());
		}
		entry.account.queue().wake();
		return had;
	}

}
