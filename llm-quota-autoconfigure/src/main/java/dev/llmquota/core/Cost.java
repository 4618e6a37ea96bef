package dev.llmquota.core;

/**
 * What a model's tokens cost, per million, in the account's currency. A price per million
 * tokens is also the price of one token in millionths of the currency, the unit budgets
 * count in. Reservations are rounded up, and budgets are charged the running total of
 * exact costs rounded up: a budget is never under-charged.
 *
 * @param inputPerMillion the price of a million input tokens
 * @param outputPerMillion the price of a million output tokens
 * @param cachedInputPerMillion the price of a million input tokens read from the
 * provider's prompt cache
 * @param cacheWriteInputPerMillion the price of a million input tokens written to the
 * provider's prompt cache
 */
public record Cost(double inputPerMillion, double outputPerMillion, double cachedInputPerMillion,
		double cacheWriteInputPerMillion) {

	public Cost {
		if (inputPerMillion < 0 || outputPerMillion < 0 || cachedInputPerMillion < 0 || cacheWriteInputPerMillion < 0) {
			throw new IllegalArgumentException("prices must not be negative");
		}
	}

	/**
	 * Prices whose cache writes cost what input costs.
	 * @param inputPerMillion the price of a million input tokens
	 * @param outputPerMillion the price of a million output tokens
	 * @param cachedInputPerMillion the price of a million input tokens read from the
	 * provider's prompt cache
	 */
	public Cost(double inputPerMillion, double outputPerMillion, double cachedInputPerMillion) {
		this(inputPerMillion, outputPerMillion, cachedInputPerMillion, inputPerMillion);
	}

	/**
	 * Whether every price is 0: calls at these prices spend nothing.
	 * @return whether nothing costs anything
	 */
	public boolean free() {
		return this.inputPerMillion == 0 && this.outputPerMillion == 0 && this.cachedInputPerMillion == 0
				&& this.cacheWriteInputPerMillion == 0;
	}

	/**
	 * Returns what a call reserves at admission: its input estimate (at the cache-write
	 * price where that is higher: the call may write its whole prompt to the cache) and
	 * its whole output ceiling, in millionths.
	 * @param demand the call's demand
	 * @return the cost reserved
	 */
	public long microsAtAdmission(Demand demand) {
		return micros(demand.inputTokens() * Math.max(this.inputPerMillion, this.cacheWriteInputPerMillion)
				+ demand.outputCeiling() * this.outputPerMillion);
	}

	/**
	 * Returns what a call cost, in millionths, rounded up.
	 * @param usage what the provider reported
	 * @return the cost
	 */
	public long micros(Usage usage) {
		return micros(exactMicros(usage));
	}

	/**
	 * Returns what a call cost, in millionths, not rounded: what budgets add up (see
	 * {@link Account#chargeMicros}) and {@code llm.quota.spend} counts.
	 * @param usage what the provider reported
	 * @return the cost
	 */
	public double exactMicros(Usage usage) {
		long plain = usage.inputTokens() - usage.cachedInputTokens() - usage.cacheWriteInputTokens();
		return plain * this.inputPerMillion + usage.cachedInputTokens() * this.cachedInputPerMillion
				+ usage.cacheWriteInputTokens() * this.cacheWriteInputPerMillion
				+ usage.outputTokens() * this.outputPerMillion;
	}

	private static long micros(double amount) {
		return (long) Math.ceil(amount - 1e-6);
	}

}
