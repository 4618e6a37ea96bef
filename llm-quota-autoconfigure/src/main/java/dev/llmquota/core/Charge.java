package dev.llmquota.core;

/**
 * Units taken from one bucket.
 *
 * @param bucket the bucket
 * @param units the units; negative only in a correction, which refunds
 * @param takenAt when a booking took the units from a rate bucket, in the store's own
 * clock, so that giving them back (the call cancelled) can tell what the bucket took
 * after them; {@link #UNKNOWN} otherwise
 */
public record Charge(BucketSpec bucket, long units, long takenAt) {

	/** No time of taking is known. */
	public static final long UNKNOWN = Long.MIN_VALUE;

	/**
	 * Units taken, or corrected, with no time of taking known.
	 * @param bucket the bucket
	 * @param units the units
	 */
	public Charge(BucketSpec bucket, long units) {
		this(bucket, units, UNKNOWN);
	}

	/**
	 * Returns these units, taken at the given time.
	 * @param at when the store took them, in its own clock
	 * @return the charge
	 */
	public Charge at(long at) {
		return new Charge(this.bucket, this.units, at);
	}

	/**
	 * Returns the charge that gives these units back, taken when they were.
	 * @return the refund
	 */
	public Charge refund() {
		return new Charge(this.bucket, -this.units, this.takenAt);
	}

}
