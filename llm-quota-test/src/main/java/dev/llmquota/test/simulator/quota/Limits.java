package dev.llmquota.test.simulator.quota;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;

/**
 * The limits of one scope (a model or the account), with the model's output defaults.
 */
public final class Limits {

	private final Map<Dimension, Long> values;

	private final long defaultMaxTokens;

	private final int outputBurndown;

	private Limits(Builder builder) {
		this.values = Collections.unmodifiableMap(new EnumMap<>(builder.values));
		this.defaultMaxTokens = builder.defaultMaxTokens;
		this.outputBurndown = builder.outputBurndown;
	}

	/**
	 * A builder with no limits, a default output ceiling of 4096 and burndown 1.
	 * @return a builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * No limit on any dimension.
	 * @return unlimited limits
	 */
	public static Limits unlimited() {
		return builder().build();
	}

	/**
	 * Configured limits by dimension; absent means unlimited.
	 * @return the limits
	 */
	public Map<Dimension, Long> values() {
		return this.values;
	}

	/**
	 * Output ceiling charged when a call names none.
	 * @return the default max tokens
	 */
	public long defaultMaxTokens() {
		return this.defaultMaxTokens;
	}

	/**
	 * Factor output tokens are charged with at settlement (Bedrock: 5 for newer Claude).
	 * @return the burndown factor
	 */
	public int outputBurndown() {
		return this.outputBurndown;
	}

	/**
	 * Builds {@link Limits}.
	 */
	public static final class Builder {

		private final Map<Dimension, Long> values = new EnumMap<>(Dimension.class);

		private long defaultMaxTokens = 4096;

		private int outputBurndown = 1;

		private Builder() {
		}

		/**
		 * Sets a limit.
		 * @param dimension the dimension
		 * @param limit the limit, not negative
		 * @return this builder
		 */
		public Builder limit(Dimension dimension, long limit) {
			if (limit < 0) {
				throw new IllegalArgumentException(dimension.id() + " must not be negative, was " + limit);
			}
			this.values.put(dimension, limit);
			return this;
		}

		public Builder requestsPerMinute(long limit) {
			return limit(Dimension.REQUESTS_PER_MINUTE, limit);
		}

		public Builder tokensPerMinute(long limit) {
			return limit(Dimension.TOKENS_PER_MINUTE, limit);
		}

		public Builder inputTokensPerMinute(long limit) {
			return limit(Dimension.INPUT_TOKENS_PER_MINUTE, limit);
		}

		public Builder outputTokensPerMinute(long limit) {
			return limit(Dimension.OUTPUT_TOKENS_PER_MINUTE, limit);
		}

		public Builder concurrentRequests(long limit) {
			return limit(Dimension.CONCURRENT_REQUESTS, limit);
		}

		public Builder requestsPerDay(long limit) {
			return limit(Dimension.REQUESTS_PER_DAY, limit);
		}

		public Builder tokensPerDay(long limit) {
			return limit(Dimension.TOKENS_PER_DAY, limit);
		}

		/**
		 * Sets the output ceiling charged when a call names none.
		 * @param tokens the default, positive
		 * @return this builder
		 */
		public Builder defaultMaxTokens(long tokens) {
			if (tokens <= 0) {
				throw new IllegalArgumentException("default-max-tokens must be positive, was " + tokens);
			}
			this.defaultMaxTokens = tokens;
			return this;
		}

		/**
		 * Sets the factor output tokens are charged with.
		 * @param factor the burndown, at least 1
		 * @return this builder
		 */
		public Builder outputBurndown(int factor) {
			if (factor < 1) {
				throw new IllegalArgumentException("output-burndown must be at least 1, was " + factor);
			}
			this.outputBurndown = factor;
			return this;
		}

		public Limits build() {
			return new Limits(this);
		}

	}

}
