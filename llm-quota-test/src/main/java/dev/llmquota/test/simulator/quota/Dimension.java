package dev.llmquota.test.simulator.quota;

/**
 * A metered dimension, named as in the llm-quota contract.
 */
public enum Dimension {

	/** Requests per minute. */
	REQUESTS_PER_MINUTE("requests-per-minute"),

	/** Input plus output tokens per minute (one combined pool). */
	TOKENS_PER_MINUTE("tokens-per-minute"),

	/** Input tokens per minute. */
	INPUT_TOKENS_PER_MINUTE("input-tokens-per-minute"),

	/** Output tokens per minute. */
	OUTPUT_TOKENS_PER_MINUTE("output-tokens-per-minute"),

	/** Requests in flight, held until the last byte. */
	CONCURRENT_REQUESTS("concurrent-requests"),

	/** Requests per calendar day. */
	REQUESTS_PER_DAY("requests-per-day"),

	/** Tokens per calendar day. */
	TOKENS_PER_DAY("tokens-per-day");

	private final String id;

	Dimension(String id) {
		this.id = id;
	}

	/**
	 * The contract name, for example {@code tokens-per-minute}.
	 * @return the id
	 */
	public String id() {
		return this.id;
	}

	/**
	 * Whether this dimension counts tokens rather than requests.
	 * @return true for token dimensions
	 */
	public boolean countsTokens() {
		return this == TOKENS_PER_MINUTE || this == INPUT_TOKENS_PER_MINUTE || this == OUTPUT_TOKENS_PER_MINUTE
				|| this == TOKENS_PER_DAY;
	}

	/**
	 * Whether this dimension resets per calendar day.
	 * @return true for per-day caps
	 */
	public boolean perDay() {
		return this == REQUESTS_PER_DAY || this == TOKENS_PER_DAY;
	}

	/**
	 * Looks a dimension up by its contract name.
	 * @param id the contract name
	 * @return the dimension
	 */
	public static Dimension ofId(String id) {
		for (Dimension dimension : values()) {
			if (dimension.id.equals(id)) {
				return dimension;
			}
		}
		throw new IllegalArgumentException("unknown dimension '" + id + "'");
	}

}
