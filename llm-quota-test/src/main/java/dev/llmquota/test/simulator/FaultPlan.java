package dev.llmquota.test.simulator;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.EnumMap;
import java.util.Map;
import java.util.Random;

/**
 * Which calls fail how: faults queued for the next calls, then seeded random faults at
 * configured rates.
 */
public final class FaultPlan {

	private final Deque<Fault> queued = new ArrayDeque<>();

	private final Map<Fault, Double> rates = new EnumMap<>(Fault.class);

	private final long seed;

	private final Random random;

	private Duration headerDelay = Duration.ofSeconds(2);

	private Duration rateLimitWait = Duration.ofMillis(100);

	FaultPlan(long seed) {
		this.seed = seed;
		this.random = new Random(seed);
	}

	/**
	 * Makes the next call fail this way; queued faults apply in order, one per call.
	 * @param fault the fault
	 * @return this plan
	 */
	public synchronized FaultPlan next(Fault fault) {
		this.queued.add(fault);
		return this;
	}

	/**
	 * Makes a share of all calls fail this way.
	 * @param fault the fault
	 * @param probability the share of calls, in [0, 1]
	 * @return this plan
	 */
	public synchronized FaultPlan rate(Fault fault, double probability) {
		if (!(probability >= 0 && probability <= 1)) {
			throw new IllegalArgumentException("fault rate must be in [0, 1], was " + probability);
		}
		this.rates.put(fault, probability);
		return this;
	}

	/**
	 * Sets the wait a {@link Fault#RATE_LIMITED} refusal asks for.
	 * @param wait the wait
	 * @return this plan
	 */
	public synchronized FaultPlan rateLimitWait(Duration wait) {
		this.rateLimitWait = wait;
		return this;
	}

	/**
	 * Returns the wait a {@link Fault#RATE_LIMITED} refusal asks for.
	 * @return the wait
	 */
	public synchronized Duration rateLimitWait() {
		return this.rateLimitWait;
	}

	/**
	 * Sets how long {@link Fault#DELAY_HEADERS} holds the headers back (simulator time).
	 * @param delay the delay
	 * @return this plan
	 */
	public synchronized FaultPlan headerDelay(Duration delay) {
		this.headerDelay = delay;
		return this;
	}

	synchronized Duration headerDelay() {
		return this.headerDelay;
	}

	/**
	 * Removes queued faults and rates, and restarts the seeded sequence.
	 */
	public synchronized void clear() {
		this.queued.clear();
		this.rates.clear();
		this.random.setSeed(this.seed);
	}

	synchronized Fault draw() {
		if (!this.queued.isEmpty()) {
			return this.queued.poll();
		}
		for (Map.Entry<Fault, Double> rate : this.rates.entrySet()) {
			if (rate.getValue() > 0 && this.random.nextDouble() < rate.getValue()) {
				return rate.getKey();
			}
		}
		return null;
	}

}
