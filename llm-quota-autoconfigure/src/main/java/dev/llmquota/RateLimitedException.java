package dev.llmquota;

import java.time.Duration;

/**
 * The provider kept answering with a rate limit after the last attempt, or asked for a
 * wait longer than what is left of the call's maximum wait.
 */
public class RateLimitedException extends LlmQuotaException {

	private final Duration wait;

	/**
	 * Creates the exception.
	 * @param provider the provider entry
	 * @param region its region
	 * @param model the model
	 * @param dimension the dimension the provider named, or {@code null} if unknown
	 * @param wait the provider's last advertised wait, or {@code null}
	 * @param why why no further attempt was made
	 */
	public RateLimitedException(String provider, String region, String model, String dimension, Duration wait,
			String why) {
		super("The provider rate-limited " + where(provider, region, model) + " on "
				+ ((dimension != null) ? dimension : "an unknown dimension")
				+ ((wait != null) ? " (it asked to wait " + DurationText.of(wait) + ")" : "") + "; " + why + ". "
				+ remedy(dimension), provider, region, model, (dimension != null) ? dimension : "unknown", null);
		this.wait = wait;
	}

	private static String remedy(String dimension) {
		if (dimension == null) {
			return "Check the provider's limits and configure them under llm.quota.providers.";
		}
		if (dimension.startsWith("requests")) {
			return "Pace the calls: set requests-per-minute to the provider's limit (or lower headroom).";
		}
		return "Shorten inputs or lower max_tokens (reserved in full until usage arrives), or set the token"
				+ " limit to the provider's.";
	}

	/**
	 * Returns the provider's last advertised wait.
	 * @return the wait, or {@code null}
	 */
	public Duration getWait() {
		return this.wait;
	}

	@Override
	public Duration getRetryAfter() {
		return this.wait;
	}

}
