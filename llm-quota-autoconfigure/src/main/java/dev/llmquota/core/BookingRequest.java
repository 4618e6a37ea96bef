package dev.llmquota.core;

import java.util.List;

/**
 * What one call asks of a store in one booking: the call's {@link Demand} in the store's
 * terms.
 *
 * @param charges the units per bucket
 * @param slots the in-flight slots shared with other processes, one each
 * @param sanctions the keys of the {@link Sanctions} that may stop the call: its pool's
 * and its account's
 * @param reserve the interactive reserve, or {@code null} when none applies
 * @param place the call's place in the line for shared slots, the same for every booking
 * of one call, so a call refused for a slot keeps the place it took: unique in this
 * process, or {@code null} for none
 */
public record BookingRequest(List<Charge> charges, List<BucketSpec> slots, List<String> sanctions, Reserve reserve,
		String place) {

	/**
	 * A call with charges only.
	 * @param charges the units per bucket
	 */
	public BookingRequest(List<Charge> charges) {
		this(charges, List.of(), List.of(), null, null);
	}

	/**
	 * A call that keeps no place in line.
	 * @param charges the units per bucket
	 * @param slots the shared in-flight slots
	 * @param sanctions the keys of the sanctions that may stop the call
	 * @param reserve the interactive reserve, or {@code null}
	 */
	public BookingRequest(List<Charge> charges, List<BucketSpec> slots, List<String> sanctions, Reserve reserve) {
		this(charges, slots, sanctions, reserve, null);
	}

	/**
	 * The share of each rate bucket kept for interactive calls. A batch call is booked
	 * only where the bucket keeps {@code share x capacity} after it, while an interactive
	 * call waited within {@code lendAfterNanos}; otherwise the reserve is lent to it. An
	 * interactive call that cannot start at once records that it waited.
	 *
	 * @param batch whether the call is a batch call
	 * @param key the store key where the account's last interactive wait is kept
	 * @param share the share of each rate bucket batch calls may not take, in [0, 1)
	 * @param lendAfterNanos how long after the last interactive wait the reserve is lent
	 */
	public record Reserve(boolean batch, String key, double share, long lendAfterNanos) {

		/**
		 * Returns the units a batch call must leave in a bucket of the given capacity.
		 * @param capacity the bucket's capacity
		 * @return the units kept back
		 */
		public long floor(long capacity) {
			return (long) Math.ceil(this.share * capacity - 1e-9);
		}

	}

}
