package dev.llmquota.core;

import java.time.ZoneId;

import dev.llmquota.core.kernel.Arith;

/**
 * Identifies one bucket in a store and says how it meters: a rate bucket (enforced units
 * per minute and a capacity), a daily counter (enforced units per day in a zone), or, in
 * a store shared by many processes, a set of in-flight slots (at most {@code enforced}
 * calls at once across processes).
 *
 * @param key the store key, unique per provider entry, scope and dimension
 * @param scope whether the bucket belongs to a pool or to the account
 * @param dimension the dimension metered
 * @param enforced the enforced limit: units per minute, per day, or calls at once
 * @param capacity the most units a rate bucket holds; equal to {@code enforced} for a
 * daily counter or slots
 * @param zone the zone of calendar days, for daily counters
 */
public record BucketSpec(String key, Scope scope, Dimension dimension, long enforced, long capacity, ZoneId zone) {

	/**
	 * Whether a bucket belongs to one pool or is shared by an account's pools.
	 */
	public enum Scope {

		/** One (provider entry, model). */
		POOL,

		/** The provider entry's shared ceilings. */
		ACCOUNT;

		/**
		 * Returns the lower-case name used in metrics and the endpoint.
		 * @return {@code pool} or {@code account}
		 */
		public String id() {
			return (this == POOL) ? "pool" : "account";
		}

	}

	public BucketSpec {
		if (enforced < 1 || capacity < 1) {
			throw new IllegalArgumentException("Bucket " + key + " needs positive limits");
		}
	}

	/**
	 * Returns what the local books leave of this bucket in the provider's terms, as its
	 * headers would say it: {@code floor(limit x local remaining / capacity)}, at least
	 * 0, so an idle bucket shows the whole published limit.
	 * @param limit the published limit
	 * @param localRemaining the units left in this bucket (negative while in debt)
	 * @return the remaining units of the published limit
	 */
	public long inProviderTerms(long limit, long localRemaining) {
		if (localRemaining <= 0) {
			return 0;
		}
		return (localRemaining >= this.capacity) ? limit : Arith.mulDiv(limit, localRemaining, this.capacity);
	}

	/**
	 * Returns whether this is a daily counter.
	 * @return whether the dimension resets per calendar day
	 */
	public boolean daily() {
		return this.dimension.kind() == Dimension.Kind.DAILY;
	}

	/**
	 * Returns whether these are in-flight slots rather than a bucket.
	 * @return whether the dimension counts calls at once
	 */
	public boolean slots() {
		return this.dimension.kind() == Dimension.Kind.CONCURRENCY;
	}

}
