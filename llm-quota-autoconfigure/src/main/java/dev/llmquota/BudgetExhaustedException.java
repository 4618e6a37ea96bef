package dev.llmquota;

import java.time.Duration;
import java.time.Instant;

/**
 * A local per-day limit (or money budget) is spent and its reset lies beyond the call's
 * maximum wait; the call was not sent.
 */
public class BudgetExhaustedException extends LlmQuotaException {

	private final Instant reset;

	public BudgetExhaustedException(String provider, String region, String model, String dimension, String scope,
			Instant reset) {
		super("The " + scope + " " + dimension + " budget of " + where(provider, region, model) + " is spent until "
				+ reset + ". Calls fail fast until then; raise the limit if the provider allows more.", provider,
				region, model, dimension, null);
		this.reset = reset;
	}

	/**
	 * Returns when the budget resets.
	 * @return the start of the next period
	 */
	public Instant getReset() {
		return this.reset;
	}

	@Override
	public Duration getRetryAfter() {
		return until(this.reset);
	}

}
