package dev.llmquota.core;

import java.util.List;
import java.util.Map;

/**
 * Which dimension binds a pool. A quota the provider says is spent binds first, if its
 * answer named the dimension; then a period's cap or money budget that cannot take the
 * pool's mean call now: either refuses every call until its reset. Otherwise, the one
 * that admits the fewest calls per minute for the pool's recent mix of calls: a
 * request-rate limit admits its rate; a token rate admits it divided by the tokens an
 * average call takes; concurrency admits it times a minute over the latency; a daily
 * limit admits a 1,440th of it. Money budgets are spend caps, not rates: they bind only
 * once spent. A provider's rate-limit penalty in force, heard by this process or another
 * sharing its store, binds next after a spent cap, if its 429 named the dimension: it too
 * refuses every call, until it ends; then a rate bucket that cannot take the mean call
 * now (lowered by a provider's report, say), the one that holds it longest, until it
 * refills.
 */
public final class Binding {

	private Binding() {
	}

	/**
	 * The dimension that binds, and whose it is.
	 *
	 * @param scope the pool's own bucket, or its account's
	 * @param dimension the dimension
	 */
	public record Bound(BucketSpec.Scope scope, Dimension dimension) {

	}

	/**
	 * Returns what binds a pool as this process alone heard the provider.
	 * @param pool the pool
	 * @param settings the engine's settings
	 * @param buckets the pool's buckets as the books hold them now (its account's too)
	 * @param now the monotonic time
	 * @return what binds, or {@code null} if nothing limits the pool
	 */
	public static Bound of(Pool pool, QuotaSettings settings, List<PoolSnapshot.BucketSnapshot> buckets, long now) {
		return of(pool, settings, buckets, now, null);
	}

	/**
	 * Returns what binds a pool: a spent quota the provider named, else a spent period's
	 * cap or budget among its buckets, else a provider's penalty in force, else the rate
	 * that admits the fewest calls.
	 * @param pool the pool
	 * @param settings the engine's settings
	 * @param buckets the pool's buckets as the books hold them now (its account's too)
	 * @param now the monotonic time
	 * @param penalizedElsewhere a penalty in force that another process sharing the store
	 * heard, or {@code null}
	 * @return what binds, or {@code null} if nothing limits the pool
	 */
	public static Bound of(Pool pool, QuotaSettings settings, List<PoolSnapshot.BucketSnapshot> buckets, long now,
			Bound penalizedElsewhere) {
		Sanctions.Exhaustion spent = pool.sanctions().exhaustion(now);
		if (spent != null && spent.dimension() != null) {
			return named(pool, spent.dimension());
		}
		Sanctions.Exhaustion accountSpent = pool.account().sanctions().exhaustion(now);
		if (accountSpent != null && accountSpent.dimension() != null) {
			return new Bound(BucketSpec.Scope.ACCOUNT, accountSpent.dimension());
		}
		Demand mix = pool.stats().meanDemand();
		if (mix == null) {
			mix = new Demand(0, pool.spec().defaultMaxTokens());
		}
		for (PoolSnapshot.BucketSnapshot bucket : buckets) {
			Dimension dimension = bucket.bucket().dimension();
			long units = dimension.unitsAtAdmission(mix, pool.spec().accounting());
			if (dimension.kind() == Dimension.Kind.DAILY && units > 0 && bucket.remaining() < units) {
				return new Bound(bucket.bucket().scope(), dimension);
			}
		}
		Dimension penalized = pool.sanctions().penalized(now);
		if (penalized != null) {
			return named(pool, penalized);
		}
		Dimension accountPenalized = pool.account().sanctions().penalized(now);
		if (accountPenalized != null) {
			return new Bound(BucketSpec.Scope.ACCOUNT, accountPenalized);
		}
		if (penalizedElsewhere != null) {
			return penalizedElsewhere;
		}
		Bound held = null;
		double longest = 0;
		for (PoolSnapshot.BucketSnapshot bucket : buckets) {
			Dimension dimension = bucket.bucket().dimension();
			long units = dimension.unitsAtAdmission(mix, pool.spec().accounting());
			// a call larger than the bucket goes once it is full: it needs the bucket
			long needed = Math.min(units, bucket.bucket().capacity());
			if (dimension.kind() == Dimension.Kind.RATE && !dimension.countsMoney() && needed > bucket.remaining()
					&& bucket.bucket().enforced() > 0) {
				// minutes until the mean call fits
				double wait = (double) (needed - bucket.remaining()) / bucket.bucket().enforced();
				if (wait > longest) {
					longest = wait;
					held = new Bound(bucket.bucket().scope(), dimension);
				}
			}
		}
		if (held != null) {
			return held;
		}
		Bound binding = null;
		double lowest = Double.MAX_VALUE;
		for (BucketSpec.Scope scope : BucketSpec.Scope.values()) {
			Limits limits = (scope == BucketSpec.Scope.POOL) ? pool.limits() : pool.account().limits();
			for (Map.Entry<Dimension, Long> limit : limits.asMap().entrySet()) {
				if (limit.getKey().countsMoney()) {
					continue;
				}
				double calls = callsPerMinute(limit.getKey(), settings.enforced(limit.getValue()), mix, pool);
				if (calls < lowest) {
					lowest = calls;
					binding = new Bound(scope, limit.getKey());
				}
			}
		}
		return binding;
	}

	/**
	 * Returns a dimension a provider named for a pool's hold, in the scope whose limit it
	 * is: the pool's, unless only its account has that limit.
	 * @param pool the pool
	 * @param dimension the dimension
	 * @return the bound
	 */
	public static Bound named(Pool pool, Dimension dimension) {
		boolean own = pool.limits().asMap().containsKey(dimension)
				|| !pool.account().limits().asMap().containsKey(dimension);
		return new Bound(own ? BucketSpec.Scope.POOL : BucketSpec.Scope.ACCOUNT, dimension);
	}

	private static double callsPerMinute(Dimension dimension, long enforced, Demand mix, Pool pool) {
		// output charged only as generated still binds: its expected units count
		long units = Math.max(1, dimension.unitsExpected(mix, pool.spec().accounting(), pool.expectedOutput(mix)));
		return switch (dimension.kind()) {
			case RATE -> (double) enforced / units;
			case DAILY -> (double) enforced / units / 1440;
			case CONCURRENCY -> enforced * 60e9 / Math.max(1, pool.latencyNanos());
		};
	}

}
