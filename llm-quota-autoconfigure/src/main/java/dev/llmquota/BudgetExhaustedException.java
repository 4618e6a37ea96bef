package dev.llmquota;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;

/**
 * A local per-day limit (or money budget) is spent and its reset lies beyond the call's
 * maximum wait, or a call may cost more than the whole of a money budget; the call was
 * not sent.
 */
public class BudgetExhaustedException extends LlmQuotaException {

	private final Instant reset;

	public BudgetExhaustedException(String provider, String region, String model, String dimension, String scope,
			Instant reset) {
		this(reset,
				"The " + scope + " " + dimension + " budget of " + where(provider, region, model) + " is spent until "
						+ reset + ". Calls fail fast until then; raise the limit if the provider allows more.",
				provider, region, model, dimension);
	}

	private BudgetExhaustedException(Instant reset, String message, String provider, String region, String model,
			String dimension) {
		super(message, provider, region, model, dimension, null);
		this.reset = reset;
	}

	/**
	 * A call that may cost more than the whole of a money budget: no period makes room
	 * for it, so it is never sent, and {@link #getReset()} is {@code null}.
	 * @param provider the provider entry
	 * @param region the region
	 * @param model the model
	 * @param dimension the budget's dimension
	 * @param scope the budget's scope
	 * @param costMicros what the call may cost, in millionths
	 * @param budgetMicros the whole budget, in millionths
	 * @return the exception
	 */
	public static BudgetExhaustedException beyondBudget(String provider, String region, String model, String dimension,
			String scope, long costMicros, long budgetMicros) {
		return new BudgetExhaustedException(null,
				"A call to " + where(provider, region, model) + " may cost up to " + money(costMicros)
						+ ", more than the whole " + scope + " " + dimension + " budget of " + money(budgetMicros)
						+ ", so it was not sent: lower its max_tokens (the output it reserves at"
						+ " the model's price), or raise the budget.",
				provider, region, model, dimension);
	}

	private static String money(long micros) {
		return BigDecimal.valueOf(micros, 6).stripTrailingZeros().toPlainString();
	}

	/**
	 * Returns when the budget resets.
	 * @return the start of the next period, or {@code null} for a call that may cost more
	 * than the whole budget
	 */
	public Instant getReset() {
		return this.reset;
	}

	@Override
	public Duration getRetryAfter() {
		return until(this.reset);
	}

}
