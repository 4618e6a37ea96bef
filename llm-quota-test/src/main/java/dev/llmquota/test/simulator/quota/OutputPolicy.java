package dev.llmquota.test.simulator.quota;

/**
 * How a dialect meters output: reserved at admission by the ceiling, or charged as it is
 * produced.
 *
 * @param reserveMaxTokens whether the output ceiling is charged at admission
 * @param refundUnusedOutput whether the unused part of the ceiling is given back at
 * completion
 */
public record OutputPolicy(boolean reserveMaxTokens, boolean refundUnusedOutput) {

	/** Reserve the ceiling, refund the rest (OpenAI, Azure, Bedrock). */
	public static final OutputPolicy RESERVE_AND_REFUND = new OutputPolicy(true, true);

	/** Charge output only as it is produced (Anthropic's current docs, Gemini). */
	public static final OutputPolicy REAL_TIME = new OutputPolicy(false, true);

}
