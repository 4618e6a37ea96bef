package dev.llmquota.core;

import java.util.List;

/**
 * The answer of a store to a booking: booked at a start time, or refused because a bucket
 * would not allow the call early enough.
 */
public sealed interface Booking permits Booking.Booked, Booking.Refused {

	/**
	 * The call was charged on every bucket, as of {@code start}.
	 *
	 * @param start when the call may start, in the caller's nanoseconds; not before the
	 * time it was booked at
	 * @param charges what was taken, to give back on cancel
	 */
	record Booked(long start, List<Charge> charges) implements Booking {

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

}
