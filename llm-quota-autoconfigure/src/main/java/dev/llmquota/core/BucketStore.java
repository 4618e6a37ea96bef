package dev.llmquota.core;

import java.time.Instant;
import java.util.List;

/**
 * The bucket arithmetic of a store: books a call on all its buckets at the earliest time
 * every one allows, corrects what it charged, and tells a bucket's state. Every operation
 * on several buckets is one atomic decision: all are charged or none. Implementations are
 * thread-safe.
 */
public interface BucketStore {

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
	 * Books a call as {@link #book(List, long, Instant, long)} does, keeping the
	 * interactive reserve from a batch call; a store shared by many processes also
	 * honours the holds other processes published and leases the call's shared in-flight
	 * slots. A store of one process ignores slots and holds: the process's own gates and
	 * holds enforce them.
	 * @param request the charges, slots and holds
	 * @param now the current monotonic time, in nanoseconds
	 * @param wallNow the current wall time
	 * @param latestStart the latest acceptable start
	 * @return the booking
	 */
	default Booking book(BookingRequest request, long now, Instant wallNow, long latestStart) {
		return book(request.charges(), now, wallNow, latestStart);
	}

	/**
	 * Books a call as {@link #book(BookingRequest, long, Instant, long)} does, for a call
	 * that can wait for the store's answer until {@code answerBy}: a store whose answer
	 * is late waits that long for it before it calls the outcome unknown.
	 * @param request the charges, slots and holds
	 * @param now the current monotonic time, in nanoseconds
	 * @param wallNow the current wall time
	 * @param latestStart the latest acceptable start
	 * @param answerBy the call's deadline, on the same clock as {@code now}
	 * @return the booking
	 */
	default Booking book(BookingRequest request, long now, Instant wallNow, long latestStart, long answerBy) {
		return book(request, now, wallNow, latestStart);
	}

	/**
	 * Returns how long from {@code now} until every bucket allows the request, its
	 * interactive reserve included, without taking anything.
	 * @param request the charges and reserve
	 * @param now the current monotonic time
	 * @param wallNow the current wall time
	 * @return nanoseconds to wait, 0 when the call fits now
	 */
	default long nanosUntilAvailable(BookingRequest request, long now, Instant wallNow) {
		return nanosUntilAvailable(request.charges(), now, wallNow);
	}

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
	 * Corrects several buckets at once, as
	 * {@link #adjust(BucketSpec, long, long, Instant)} does for each; a remote store does
	 * it in one round trip.
	 * @param corrections the units per bucket, positive to charge, negative to refund
	 * @param now the current monotonic time
	 * @param wallNow the current wall time
	 */
	default void adjust(List<Charge> corrections, long now, Instant wallNow) {
		for (Charge correction : corrections) {
			adjust(correction.bucket(), correction.units(), now, wallNow);
		}
	}

	/**
	 * Corrects what a booking charged (usage, a refusal, a call that never started): as
	 * {@link #adjust(List, long, Instant)}, on the books that charged the booking, where
	 * a store keeps more than one.
	 * @param booking the booking corrected
	 * @param corrections the units per bucket, positive to charge, negative to refund
	 * @param now the current monotonic time
	 * @param wallNow the current wall time
	 */
	default void correct(Booking.Booked booking, List<Charge> corrections, long now, Instant wallNow) {
		adjust(corrections, now, wallNow);
	}

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

}
