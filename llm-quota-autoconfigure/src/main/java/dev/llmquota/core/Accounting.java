package dev.llmquota.core;

import dev.llmquota.core.kernel.Arith;

/**
 * How a provider entry charges a call's output and cached input.
 *
 * @param reserveMaxTokens whether the output ceiling is charged at admission
 * @param refundUnusedOutput whether the unused part of the ceiling is given back when
 * usage arrives
 * @param cachedInputCounts whether cached input tokens count toward input limits
 * @param outputBurndown how many times each output token counts (at least 1)
 * @param cost what the model's tokens cost, for money budgets; {@code null} when unknown
 * (its calls then spend nothing from a budget)
 */
public record Accounting(boolean reserveMaxTokens, boolean refundUnusedOutput, boolean cachedInputCounts,
		int outputBurndown, Cost cost) {

	/**
	 * Accounting without prices.
	 * @param reserveMaxTokens whether the output ceiling is charged at admission
	 * @param refundUnusedOutput whether unused output is given back
	 * @param cachedInputCounts whether cached input counts toward input limits
	 * @param outputBurndown how many times each output token counts
	 */
	public Accounting(boolean reserveMaxTokens, boolean refundUnusedOutput, boolean cachedInputCounts,
			int outputBurndown) {
		this(reserveMaxTokens, refundUnusedOutput, cachedInputCounts, outputBurndown, null);
	}

	public Accounting {
		if (outputBurndown < 1) {
			throw new IllegalArgumentException("outputBurndown must be at least 1 but was " + outputBurndown);
		}
	}

	long burnedOutput(long outputTokens) {
		return Arith.mulDiv(outputTokens, this.outputBurndown, 1);
	}

}
