package dev.llmquota.core;

import java.time.Duration;
import java.util.function.BiConsumer;

/**
 * What processes sharing a store tell each other beyond buckets: leases on shared
 * in-flight slots, the provider's penalties and spent quotas, and limits changed at run
 * time. A store of one process has nobody to tell: every method does nothing, and the
 * process's own gates and holds enforce what these carry.
 */
public interface ClusterSignals {

	/**
	 * Gives back the shared in-flight slots of a lease.
	 * @param lease the lease
	 */
	default void release(Booking.Lease lease) {
	}

	/**
	 * Publishes a provider rate-limit penalty to every process sharing the store.
	 * @param hold the hold's key
	 * @param dimension the dimension the provider named, or {@code null} if none
	 * @param waitNanos how long from now the penalty lasts
	 */
	default void penalize(String hold, Dimension dimension, long waitNanos) {
	}

	/**
	 * Publishes a spent administrative quota to every process sharing the store.
	 * @param hold the hold's key
	 * @param dimension the dimension concerned, or {@code null}
	 * @param reason what the provider said
	 * @param wait how long until the quota comes back, or {@code null} if unknown: a
	 * wait, never a time, so no replica's wall clock moves it
	 * @param probeIntervalNanos how often one call may go through to see whether it is
	 * back, where the reset is unknown
	 */
	default void exhaust(String hold, Dimension dimension, String reason, Duration wait, long probeIntervalNanos) {
	}

	/**
	 * Ends a published exhaustion (a probe succeeded, or an operator reset it).
	 * @param hold the hold's key
	 */
	default void clearExhaustion(String hold) {
	}

	/**
	 * Returns what the processes sharing the store hold a pool or an account under now,
	 * whoever heard it: what each replica's endpoint and health show.
	 * @param hold the hold's key
	 * @return the hold, or {@code null} when the store has none to share or cannot say
	 * now
	 */
	default SharedHold hold(String hold) {
		return null;
	}

	/**
	 * Publishes a limit an operator changed at run time to every process sharing the
	 * store.
	 * @param key the provider entry's key of changed limits
	 * @param field {@code <dimension>|<model>}, or {@code <dimension>|} for the account
	 * @param limit the new published limit
	 */
	default void publishLimit(String key, String field, long limit) {
	}

	/**
	 * Tells the listener of limits other processes publish for a provider entry, each
	 * soon after it changes.
	 * @param key the provider entry's key of changed limits
	 * @param listener takes a field as {@link #publishLimit} names it, and the limit
	 */
	default void watchLimits(String key, BiConsumer<String, Long> listener) {
	}

}
