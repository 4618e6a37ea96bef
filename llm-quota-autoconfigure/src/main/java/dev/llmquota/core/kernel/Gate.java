package dev.llmquota.core.kernel;

/** A bound on what is outstanding at once. */
public interface Gate {

	long inUse();

	long capacity();

	/**
	 * The weight a call of this size holds: its size clamped to the capacity, so an
	 * oversized call is admitted alone.
	 * @param units the call's size
	 * @return the weight
	 */
	long weight(long units);

	default boolean fits(long units) {
		return inUse() + weight(units) <= capacity();
	}

}
