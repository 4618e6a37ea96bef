package dev.llmquota.core;

import java.time.Instant;

/**
 * What the engine tells observers (metrics) as calls pass; every method defaults to
 * nothing. Called outside the engine's locks; implementations must be quick and must not
 * throw.
 */
public interface QuotaEvents {

	/** Observers that do nothing. */
	QuotaEvents NONE = new QuotaEvents() {
	};

	/**
	 * A pool was created (configured at start, or made for an unlisted model).
	 * @param pool the pool
	 */
	default void poolCreated(Pool pool) {
	}

	/**
	 * A pool made for an unlisted model was evicted by {@code max-pools}.
	 * @param pool the pool
	 */
	default void poolEvicted(Pool pool) {
	}

	/**
	 * An account's limits changed at run time (an operator's change, or one another
	 * replica published): it may limit a dimension it did not limit before.
	 * @param account the account
	 */
	default void accountLimitsChanged(Account account) {
	}

	/**
	 * A call was admitted.
	 * @param pool its pool
	 * @param priority its class
	 * @param waitedNanos how long it waited
	 */
	default void admitted(Pool pool, Priority priority, long waitedNanos) {
	}

	/**
	 * A call's usage was taken into the books.
	 * @param pool its pool
	 * @param demand what it reserved
	 * @param usage what it used
	 * @param reservedOutput the output tokens it reserved (after burndown)
	 * @param billedOutput the output tokens it was billed (after burndown)
	 */
	default void reconciled(Pool pool, Demand demand, Usage usage, long reservedOutput, long billedOutput) {
	}

	/**
	 * A call of a pool with prices ended and its money was charged: what it cost by its
	 * usage, or what it reserved where its usage is unknown or only estimated (what money
	 * budgets were charged).
	 * @param pool its pool
	 * @param micros the amount, in millionths of the account's currency, not rounded
	 */
	default void spent(Pool pool, double micros) {
	}

	/**
	 * An input estimate was compared with the provider's count.
	 * @param pool the pool
	 * @param ratio actual / estimated
	 */
	default void drift(Pool pool, double ratio) {
	}

	/**
	 * The provider answered with a rate limit.
	 * @param pool the pool
	 * @param dimension the dimension it named, or {@code null} if unknown
	 */
	default void throttled(Pool pool, Dimension dimension) {
	}

	/**
	 * A call of a pool in shadow mode would have waited this long for admission in
	 * enforce mode (0 when it would have gone at once).
	 * @param pool the pool
	 * @param wouldHaveWaitedNanos the wait
	 */
	default void shadowed(Pool pool, long wouldHaveWaitedNanos) {
	}

	/**
	 * A call of a pool in shadow mode would have been refused in enforce mode.
	 * @param pool the pool
	 * @param refusal what enforce mode would have raised
	 */
	default void shadowRefused(Pool pool, Throwable refusal) {
	}

	/**
	 * A money budget of an account has reached its warning share.
	 * @param account the account
	 * @param dimension {@code budget-per-day} or {@code budget-per-month}
	 * @param spentMicros what was spent this period, in millionths
	 * @param limitMicros the budget, in millionths
	 * @param reset when the period ends
	 */
	default void budgetWarning(Account account, Dimension dimension, long spentMicros, long limitMicros,
			Instant reset) {
	}

}
