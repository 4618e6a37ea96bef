package dev.llmquota.test.simulator.quota;

import java.time.Duration;

/**
 * One metered dimension of one scope.
 */
interface Meter {

	Dimension dimension();

	long limit();

	/**
	 * Whether the amount can be taken now.
	 */
	boolean fits(long amount, long nowNanos);

	/**
	 * Takes the amount, going into debt if needed; a negative amount gives back.
	 */
	void take(long amount, long nowNanos);

	/**
	 * Takes a refused call's amount: like {@link #take}, but a provider counting requests
	 * over a minute remembers no more than a minute of them, so the debt stops at one
	 * minute's limit.
	 */
	default void takeRefused(long amount, long nowNanos) {
		take(amount, nowNanos);
	}

	/**
	 * The wait until the amount fits, or {@code null} if it never will.
	 */
	Duration waitFor(long amount, long nowNanos);

	/**
	 * What the meter shows now; rate buckets report in per-minute units whatever their
	 * window.
	 */
	DimensionState state(String scope, long nowNanos);

}
