package dev.llmquota.core;

/**
 * What one call asks of its buckets before it is sent: the estimated input tokens and the
 * declared output ceiling ({@code max_tokens} or the model's default).
 *
 * @param inputTokens the estimated input tokens, never negative
 * @param outputCeiling the output ceiling before any burndown factor, never negative
 */
public record Demand(long inputTokens, long outputCeiling) {

	public Demand {
		if (inputTokens < 0 || outputCeiling < 0) {
			throw new IllegalArgumentException(
					"Token counts must not be negative: input=" + inputTokens + ", output=" + outputCeiling);
		}
	}

}
