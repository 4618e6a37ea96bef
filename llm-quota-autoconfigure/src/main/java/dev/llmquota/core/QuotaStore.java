package dev.llmquota.core;

import java.time.Instant;
import java.util.List;

/**
 * Where bucket state lives. Every operation on several buckets is one atomic decision:
 * all are charged or none. A store books a call at the earliest time every bucket allows,
 * so stores shared by many processes keep order with one round trip per admission.
 * Implementations are thread-safe.
 */
public interface QuotaStore extends AutoCloseable {

	/**
	 * Books a call on all its buckets at the earliest time every one allows, if that is
	 * no later than {@code latestStart}; otherwise takes nothing.
	 * @param charges the units per bucket
	 * @param now the current monotonic time, in nanoseconds
	 * @param wallNow the current wall time, for calendar days
	 * @param latestStart the latest acceptable start; {@code now} books only if the call
	 * can start at once
	 * @return the booking, or the refusal naming the binding bucket
	 */
	Booking book(List<Charge> charges, long now, Instant wallNow, long latestStart);

	/**
	 * Returns how long from {@code now} until every bucket allows the charges, without
	 * taking anything.
	 * @param charges the units per bucket
	 * @param now the current monotonic time
	 * @param wallNow the current wall time
	 * @return nanoseconds to wait, 0 when the call fits now
	 */
	long nanosUntilAvailable(List<Charge> charges, long now, Instant wallNow);

	/**
	 * Gives back everything a booking took; for a call that never started.
	 * @param booking the booking
	 * @param now the current monotonic time
	 * @param wallNow the current wall time
	 */
	void cancel(Booking.Booked booking, long now, Instant wallNow);

	/**
	 * Charges more (positive) or refunds (negative) units on one bucket. A charge may
	 * drive the bucket into debt; a refund never fills it beyond its capacity.
	 * @param bucket the bucket
	 * @param units the correction
	 * @param now the current monotonic time
	 * @param wallNow the current wall time
	 */
	void adjust(BucketSpec bucket, long units, long now, Instant wallNow);

	/**
	 * Lowers a rate bucket's level to at most {@code maxLevel}; never raises it.
	 * @param bucket the bucket
	 * @param maxLevel the highest level allowed
	 * @param now the current monotonic time
	 */
	void lowerTo(BucketSpec bucket, long maxLevel, long now);

	/**
	 * Returns a bucket's state.
	 * @param bucket the bucket
	 * @param now the current monotonic time
	 * @param wallNow the current wall time
	 * @return its state
	 */
	BucketState state(BucketSpec bucket, long now, Instant wallNow);

	/**
	 * Forgets buckets nobody will use again (the pool of an unlisted model evicted by
	 * {@code max-pools}), so memory stays bounded; a store with key expiry may ignore it.
	 * @param buckets the buckets
	 */
	default void forget(List<BucketSpec> buckets) {
	}

	/**
	 * Returns whether the store answers (a remote store may be unreachable).
	 * @return whether it is available
	 */
	default boolean isAvailable() {
		return true;
	}

	@Override
	default void close() {
	}

}
