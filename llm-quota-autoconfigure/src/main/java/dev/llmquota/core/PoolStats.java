package dev.llmquota.core;

import java.util.Arrays;

/**
 * What one pool's calls looked like: how many are in flight and how many tokens they
 * hold, the average call (for which bucket binds), and reserved versus billed output (for
 * a better {@code max_tokens}). Thread-safe.
 */
public final class PoolStats {

	private static final int OUTPUT_SAMPLES = 1024;

	private long inFlightCalls;

	private long inFlightTokens;

	private double meanInput;

	private double meanOutputCeiling;

	private long calls;

	private long reservedOutput;

	private long billedOutput;

	private final long[] outputs = new long[OUTPUT_SAMPLES];

	private RateLimited lastRateLimit;

	/**
	 * The provider's last rate-limit answer to this pool.
	 *
	 * @param at when it came
	 * @param dimension the dimension it named, or {@code null} if unknown
	 * @param delay the wait it asked for
	 */
	public record RateLimited(java.time.Instant at, Dimension dimension, java.time.Duration delay) {

	}

	private int outputCount;

	/**
	 * Shadow mode: calls admitted by their twins, how many of those would have waited,
	 * the total and longest wait, and twins refused.
	 */
	private final long[] shadow = new long[5];

	/**
	 * What shadow mode saw for a pool.
	 *
	 * @param calls calls whose twins were admitted
	 * @param delayed how many of them enforce mode would have delayed
	 * @param meanDelayNanos the mean delay of those
	 * @param maxDelayNanos the longest delay
	 * @param refused calls enforce mode would have refused
	 */
	public record Shadow(long calls, long delayed, long meanDelayNanos, long maxDelayNanos, long refused) {

	}

	/** Per class: calls admitted, their total wait and their longest, in nanoseconds. */
	private final long[][] waits = new long[Priority.values().length][3];

	/**
	 * How the calls of one class waited for admission.
	 *
	 * @param admitted calls admitted
	 * @param meanWaitNanos their mean wait
	 * @param maxWaitNanos their longest wait
	 */
	public record ClassWaits(long admitted, long meanWaitNanos, long maxWaitNanos) {

	}

	/**
	 * A call was admitted.
	 * @param demand what it asked
	 * @param tokens the tokens it reserved, as its pool charges them
	 * @param priority its class
	 * @param waitedNanos how long it waited
	 * @param shadow whether it is a shadow twin
	 */
	synchronized void admitted(Demand demand, long tokens, Priority priority, long waitedNanos, boolean shadow) {
		if (!shadow) {
			// a shadow twin's wait is what enforce mode would have done: its own report
			long[] waits = this.waits[priority.ordinal()];
			waits[0]++;
			waits[1] += waitedNanos;
			waits[2] = Math.max(waits[2], waitedNanos);
		}
		this.inFlightCalls++;
		this.inFlightTokens += tokens;
		// the average call of the recent mix: 20 calls weigh about as much as
		// all before them
		double weight = (this.calls < 20) ? 1.0 / (this.calls + 1) : 0.05;
		this.meanInput += (demand.inputTokens() - this.meanInput) * weight;
		this.meanOutputCeiling += (demand.outputCeiling() - this.meanOutputCeiling) * weight;
		this.calls++;
	}

	synchronized void released(long tokens) {
		this.inFlightCalls = Math.max(0, this.inFlightCalls - 1);
		this.inFlightTokens = Math.max(0, this.inFlightTokens - tokens);
	}

	synchronized void output(long reserved, long billed, long generated) {
		this.reservedOutput += reserved;
		this.billedOutput += billed;
		this.outputs[this.outputCount % OUTPUT_SAMPLES] = generated;
		this.outputCount++;
	}

	synchronized void rateLimited(RateLimited answer) {
		this.lastRateLimit = answer;
	}

	/**
	 * Returns the provider's last rate-limit answer.
	 * @return the answer, or {@code null} if there was none
	 */
	public synchronized RateLimited lastRateLimit() {
		return this.lastRateLimit;
	}

	/**
	 * Returns the calls holding slots now.
	 * @return calls in flight
	 */
	synchronized void shadowed(long wouldHaveWaitedNanos) {
		this.shadow[0]++;
		if (wouldHaveWaitedNanos > 0) {
			this.shadow[1]++;
			this.shadow[2] += wouldHaveWaitedNanos;
			this.shadow[3] = Math.max(this.shadow[3], wouldHaveWaitedNanos);
		}
	}

	synchronized void shadowRefused() {
		this.shadow[4]++;
	}

	/**
	 * Returns what shadow mode saw: calls, how many enforce mode would have delayed and
	 * by how much, and how many it would have refused.
	 * @return the shadow report
	 */
	public synchronized Shadow shadow() {
		return new Shadow(this.shadow[0], this.shadow[1], (this.shadow[1] > 0) ? this.shadow[2] / this.shadow[1] : 0,
				this.shadow[3], this.shadow[4]);
	}

	public synchronized ClassWaits waits(Priority priority) {
		long[] waits = this.waits[priority.ordinal()];
		return new ClassWaits(waits[0], (waits[0] > 0) ? waits[1] / waits[0] : 0, waits[2]);
	}

	public synchronized long inFlightCalls() {
		return this.inFlightCalls;
	}

	/**
	 * Returns the tokens calls in flight reserved, as their pool charges tokens: the
	 * input estimate, and the output ceiling where it is reserved (with its burndown).
	 * @return tokens in flight
	 */
	public synchronized long inFlightTokens() {
		return this.inFlightTokens;
	}

	/**
	 * Returns the average call of the recent mix, or {@code null} before the first call.
	 * @return the average demand
	 */
	public synchronized Demand meanDemand() {
		return (this.calls == 0) ? null : new Demand(Math.round(this.meanInput), Math.round(this.meanOutputCeiling));
	}

	/**
	 * Returns the output tokens reserved by calls that reported usage.
	 * @return reserved output tokens
	 */
	public synchronized long reservedOutput() {
		return this.reservedOutput;
	}

	/**
	 * Returns the output tokens those calls were billed.
	 * @return billed output tokens
	 */
	public synchronized long billedOutput() {
		return this.billedOutput;
	}

	/**
	 * Returns the 99th percentile of generated output over the last calls.
	 * @return the p99 of output tokens, or -1 before any usage
	 */
	public synchronized long outputP99() {
		int count = Math.min(this.outputCount, OUTPUT_SAMPLES);
		if (count == 0) {
			return -1;
		}
		long[] sorted = Arrays.copyOf(this.outputs, count);
		Arrays.sort(sorted);
		return sorted[Math.min(count - 1, (int) Math.ceil(count * 0.99) - 1)];
	}

	/**
	 * Returns the mean output generated by the last calls that reported usage.
	 * @return the mean output tokens, or -1 before any usage
	 */
	public synchronized long meanOutput() {
		int count = Math.min(this.outputCount, OUTPUT_SAMPLES);
		if (count == 0) {
			return -1;
		}
		long sum = 0;
		for (int i = 0; i < count; i++) {
			sum += this.outputs[i];
		}
		return Math.round((double) sum / count);
	}

	/**
	 * Returns how many calls reported usage.
	 * @return the number of output samples
	 */
	public synchronized long outputSamples() {
		return this.outputCount;
	}

}
