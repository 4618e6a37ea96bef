package dev.llmquota.core;

import dev.llmquota.core.kernel.Gate;

/**
 * A bound on what is outstanding at once: calls, or tokens weighted per call. A weight
 * larger than the capacity is clamped to it, so such a call is admitted alone instead of
 * waiting forever. The capacity may change while calls are in flight (it follows observed
 * latency); a smaller capacity only makes later calls wait. Instances are not
 * thread-safe.
 */
final class InFlightGate implements Gate {

	private final Dimension dimension;

	private final boolean derived;

	private long capacity;

	private long inUse;

	/**
	 * Creates an empty gate.
	 * @param dimension the dimension the gate bounds, named when it blocks a call
	 * @param derived whether the capacity is derived from a rate by Little's law rather
	 * than configured
	 * @param capacity the most units outstanding at once, at least 1
	 */
	InFlightGate(Dimension dimension, boolean derived, long capacity) {
		this.dimension = dimension;
		this.derived = derived;
		this.capacity = Math.max(1, capacity);
	}

	public Dimension dimension() {
		return this.dimension;
	}

	/**
	 * Returns whether the capacity follows a rate and the observed latency (Little's
	 * law).
	 * @return whether derived
	 */
	public boolean derived() {
		return this.derived;
	}

	@Override
	public long capacity() {
		return this.capacity;
	}

	@Override
	public long inUse() {
		return this.inUse;
	}

	void resize(long capacity) {
		this.capacity = Math.max(1, capacity);
	}

	/**
	 * Returns the weight a call of the given size holds: its size clamped to the
	 * capacity.
	 * @param units the call's size
	 * @return the weight
	 */
	@Override
	public long weight(long units) {
		return Math.min(units, this.capacity);
	}

	/**
	 * Enters a call.
	 * @param units the call's size
	 * @return the weight held, to be given to {@link #release(long)}
	 */
	long take(long units) {
		long weight = weight(units);
		this.inUse += weight;
		return weight;
	}

	void release(long weight) {
		this.inUse = Math.max(0, this.inUse - weight);
	}

}
