package dev.llmquota;

import java.time.Duration;
import java.time.Instant;

/**
 * The provider said an administrative quota is spent (billing, a spend cap, a per-day or
 * service quota): the call was not sent and will not succeed by waiting a little.
 */
public class QuotaExhaustedException extends LlmQuotaException {

	private final Instant reset;

	/**
	 * Creates the exception.
	 * @param provider the provider entry
	 * @param region its region
	 * @param model the model
	 * @param dimension the dimension concerned, or {@code null} for a billing answer
	 * @param reason what the provider said
	 * @param reset when the quota comes back, or {@code null} if unknown
	 */
	public QuotaExhaustedException(String provider, String region, String model, String dimension, String reason,
			Instant reset) {
		super("An administrative quota of " + where(provider, region, model) + " is spent"
				+ ((dimension != null) ? " (" + dimension + ")" : "") + ": " + reason + ". "
				+ ((reset != null) ? "It comes back at " + reset + "; " : "No reset is known; ")
				+ "calls fail fast until then. Raise the quota or add credit with the provider, then reset the pool"
				+ " through /actuator/llmquota if you cannot wait.", provider, region, model, dimension, null);
		this.reset = reset;
	}

	/**
	 * Returns when the quota comes back.
	 * @return the reset, or {@code null} if unknown
	 */
	public Instant getReset() {
		return this.reset;
	}

	@Override
	public Duration getRetryAfter() {
		return until(this.reset);
	}

}
