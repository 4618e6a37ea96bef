package dev.llmquota.core;

/**
 * What a provider reported a call used.
 *
 * @param inputTokens all input tokens of the call, cached ones included: what the
 * estimator should have predicted
 * @param cachedInputTokens the part of {@code inputTokens} read from the provider's
 * prompt cache
 * @param outputTokens the output tokens generated
 * @param cacheWriteInputTokens the part of {@code inputTokens} written to the provider's
 * prompt cache (Anthropic's and Bedrock's cache writes, billed above the input price)
 */
public record Usage(long inputTokens, long cachedInputTokens, long outputTokens, long cacheWriteInputTokens) {

	public Usage {
		if (inputTokens < 0 || cachedInputTokens < 0 || outputTokens < 0 || cacheWriteInputTokens < 0) {
			throw new IllegalArgumentException("Usage must not be negative");
		}
		cachedInputTokens = Math.min(cachedInputTokens, inputTokens);
		cacheWriteInputTokens = Math.min(cacheWriteInputTokens, inputTokens - cachedInputTokens);
	}

	/**
	 * Usage with no prompt-cache writes.
	 * @param inputTokens all input tokens of the call, cached ones included
	 * @param cachedInputTokens the part of {@code inputTokens} read from the prompt cache
	 * @param outputTokens the output tokens generated
	 */
	public Usage(long inputTokens, long cachedInputTokens, long outputTokens) {
		this(inputTokens, cachedInputTokens, outputTokens, 0);
	}

	/**
	 * Returns the input tokens the provider bills against its limits.
	 * @param cachedInputCounts whether cached input counts toward input limits
	 * @return the billed input tokens
	 */
	public long billedInputTokens(boolean cachedInputCounts) {
		return cachedInputCounts ? this.inputTokens : this.inputTokens - this.cachedInputTokens;
	}

}
