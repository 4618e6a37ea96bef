package dev.llmquota.core;

import java.time.Instant;
import java.time.LocalDate;
import java.util.List;

/**
 * The answer of a store to a booking: booked at a start time, refused because a bucket
 * would not allow the call early enough, or, from a store shared by many processes, held
 * or exhausted by what another process heard from the provider, or unavailable.
 */
public sealed interface Booking
		permits Booking.Booked, Booking.Refused, Booking.Penalized, Booking.Exhausted, Booking.Unavailable {

	/**
	 * The call was charged on every bucket, as of {@code start}.
	 *
	 * @param start when the call may start, in the caller's nanoseconds; not before the
	 * time it was booked at
	 * @param bookedAt the wall time it was booked at: the calendar day its daily counters
	 * were charged to, whenever it starts
	 * @param charges what was taken, to give back on cancel
	 * @param lease the lease that holds the call's shared in-flight slots, or
	 * {@code null} when it holds none
	 * @param probe whether the call was let through an exhausted quota to see whether it
	 * is back
	 * @param fallback whether a shared store charged it to its local fallback books while
	 * it could not reach the shared ones: its corrections go there too
	 */
	record Booked(long start, Instant bookedAt, List<Charge> charges, Lease lease, boolean probe,
			boolean fallback) implements Booking {

		/**
		 * A booking without shared slots.
		 * @param start when the call may start
		 * @param bookedAt the wall time it was booked at
		 * @param charges what was taken
		 */
		public Booked(long start, Instant bookedAt, List<Charge> charges) {
			this(start, bookedAt, charges, null, false, false);
		}

		/**
		 * A booking in the books the store keeps.
		 * @param start when the call may start
		 * @param bookedAt the wall time it was booked at
		 * @param charges what was taken
		 * @param lease the lease of its shared slots, or {@code null}
		 * @param probe whether it probes an exhausted quota
		 */
		public Booked(long start, Instant bookedAt, List<Charge> charges, Lease lease, boolean probe) {
			this(start, bookedAt, charges, lease, probe, false);
		}

		/**
		 * Returns whether a refund may go to a bucket now: not to a daily counter whose
		 * period has ended since the booking charged it (the refund would be taken from a
		 * period that never charged it).
		 * @param bucket the bucket
		 * @param wallNow the current wall time
		 * @return whether the bucket still counts the period the booking charged
		 */
		public boolean refundable(BucketSpec bucket, Instant wallNow) {
			Dimension period = bucket.dimension();
			// a wall clock stepped back leaves the counter on the booking's period: it
			// never goes back
			return !bucket.daily() || !period.periodStart(LocalDate.ofInstant(wallNow, bucket.zone()))
				.isAfter(period.periodStart(LocalDate.ofInstant(this.bookedAt, bucket.zone())));
		}

		/**
		 * Returns what cancelling this booking gives back now: every charge, but a daily
		 * one only while its period lasts.
		 * @param wallNow the current wall time
		 * @return the refunds, negative units
		 */
		public List<Charge> refunds(Instant wallNow) {
			return this.charges.stream()
				.filter((charge) -> refundable(charge.bucket(), wallNow))
				.map(Charge::refund)
				.toList();
		}

	}

	/**
	 * Shared in-flight slots taken for one call, until released or expired.
	 *
	 * @param id the lease's id, unique across processes
	 * @param slots the slots
	 */
	record Lease(String id, List<BucketSpec> slots) {

	}

	/**
	 * Nothing was taken: the named bucket allows the call only later.
	 *
	 * @param bucket the bucket that binds
	 * @param waitNanos nanoseconds from the booking time until it allows the call;
	 * {@link Long#MAX_VALUE} for never
	 */
	record Refused(BucketSpec bucket, long waitNanos) implements Booking {

	}

	/**
	 * Nothing was taken: a provider rate-limit penalty, heard by some process, holds the
	 * call beyond its latest start.
	 *
	 * @param sanctions the key of the sanctions
	 * @param dimension the dimension the provider named, or {@code null} if none
	 * @param waitNanos nanoseconds from the booking time until the penalty ends
	 */
	record Penalized(String sanctions, Dimension dimension, long waitNanos) implements Booking {

	}

	/**
	 * Nothing was taken: some process heard that an administrative quota is spent.
	 *
	 * @param sanctions the key of the sanctions
	 * @param dimension the dimension concerned, or {@code null}
	 * @param reason what the provider said
	 * @param resetNanos how long until the quota comes back, from now, or -1 if unknown:
	 * a wait, which no wall clock of this process moves
	 */
	record Exhausted(String sanctions, Dimension dimension, String reason, long resetNanos) implements Booking {

	}

	/**
	 * Nothing was taken: the store does not answer and no fallback serves.
	 *
	 * @param reason why, for the operator
	 */
	record Unavailable(String reason) implements Booking {

	}

}
