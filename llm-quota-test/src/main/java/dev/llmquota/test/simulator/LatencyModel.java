package dev.llmquota.test.simulator;

import java.time.Duration;
import java.util.Random;

/**
 * How long answers take and how long they are: time to first token, time per output
 * token, and an output length drawn from a seeded uniform share of the call's
 * {@code max_tokens}.
 */
public final class LatencyModel {

	private final Duration timeToFirstToken;

	private final Duration perOutputToken;

	private final double minShare;

	private final double maxShare;

	private final long fixedOutputTokens;

	private final long seed;

	private final Random random;

	private LatencyModel(Builder builder) {
		this.timeToFirstToken = builder.timeToFirstToken;
		this.perOutputToken = builder.perOutputToken;
		this.minShare = builder.minShare;
		this.maxShare = builder.maxShare;
		this.fixedOutputTokens = builder.fixedOutputTokens;
		this.seed = builder.seed;
		this.random = new Random(builder.seed);
	}

	/**
	 * A builder: no latency, output between 10% and 50% of {@code max_tokens}, seed 42.
	 * @return a builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Instant answers with the default output distribution.
	 * @return the model
	 */
	public static LatencyModel none() {
		return builder().build();
	}

	public Duration timeToFirstToken() {
		return this.timeToFirstToken;
	}

	public Duration perOutputToken() {
		return this.perOutputToken;
	}

	/**
	 * Draws the output length of one call, never above its ceiling and at least one
	 * token.
	 * @param maxTokens the call's output ceiling
	 * @return output tokens
	 */
	public synchronized long outputTokens(long maxTokens) {
		if (this.fixedOutputTokens > 0) {
			return Math.max(1, Math.min(maxTokens, this.fixedOutputTokens));
		}
		double share = this.minShare + (this.maxShare - this.minShare) * this.random.nextDouble();
		return Math.max(1, Math.min(maxTokens, Math.round(maxTokens * share)));
	}

	/**
	 * Restarts the seeded sequence, so a test sees the same lengths every run.
	 */
	public synchronized void reseed() {
		this.random.setSeed(this.seed);
	}

	/**
	 * Builds a {@link LatencyModel}.
	 */
	public static final class Builder {

		private Duration timeToFirstToken = Duration.ZERO;

		private Duration perOutputToken = Duration.ZERO;

		private double minShare = 0.1;

		private double maxShare = 0.5;

		private long fixedOutputTokens;

		private long seed = 42;

		private Builder() {
		}

		public Builder timeToFirstToken(Duration duration) {
			this.timeToFirstToken = nonNegative(duration, "time-to-first-token");
			return this;
		}

		public Builder perOutputToken(Duration duration) {
			this.perOutputToken = nonNegative(duration, "per-output-token");
			return this;
		}

		/**
		 * Draws output lengths uniformly between the two shares of {@code max_tokens}.
		 * @param min the lowest share, in (0, 1]
		 * @param max the highest share, in [min, 1]
		 * @return this builder
		 */
		public Builder outputShare(double min, double max) {
			if (!(min > 0 && min <= max && max <= 1)) {
				throw new IllegalArgumentException(
						"output-share must satisfy 0 < min <= max <= 1, was " + min + ".." + max);
			}
			this.minShare = min;
			this.maxShare = max;
			return this;
		}

		/**
		 * Makes every answer this long (capped by the call's ceiling) instead of drawing.
		 * @param tokens the output length, positive
		 * @return this builder
		 */
		public Builder fixedOutputTokens(long tokens) {
			if (tokens <= 0) {
				throw new IllegalArgumentException("output-tokens must be positive, was " + tokens);
			}
			this.fixedOutputTokens = tokens;
			return this;
		}

		public Builder seed(long seed) {
			this.seed = seed;
			return this;
		}

		public LatencyModel build() {
			return new LatencyModel(this);
		}

		private static Duration nonNegative(Duration duration, String name) {
			if (duration.isNegative()) {
				throw new IllegalArgumentException(name + " must not be negative, was " + duration);
			}
			return duration;
		}

	}

}
