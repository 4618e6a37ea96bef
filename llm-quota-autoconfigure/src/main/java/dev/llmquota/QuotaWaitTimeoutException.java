package dev.llmquota;

import java.time.Duration;

/**
 * Admission was not possible within the call's maximum wait; names the dimension that
 * blocked it.
 */
public class QuotaWaitTimeoutException extends LlmQuotaException {

	private final Duration waited;

	private final Duration retryAfter;

	/**
	 * Creates the exception.
	 * @param provider the provider entry
	 * @param region its region
	 * @param model the model
	 * @param dimension the dimension that blocked
	 * @param blocker what blocked, for people: the scope, the dimension and whether its
	 * rate bucket or its in-flight bound
	 * @param waited how long the call waited
	 */
	public QuotaWaitTimeoutException(String provider, String region, String model, String dimension, String blocker,
			Duration waited) {
		this(provider, region, model, dimension, blocker, waited, null);
	}

	/**
	 * Creates the exception, with the time until the blocking bucket would admit the
	 * call.
	 * @param provider the provider entry
	 * @param region its region
	 * @param model the model
	 * @param dimension the dimension that blocked
	 * @param blocker what blocked, for people
	 * @param waited how long the call waited
	 * @param retryAfter how long from now until the blocking bucket would admit the call,
	 * or {@code null} if unknown
	 */
	public QuotaWaitTimeoutException(String provider, String region, String model, String dimension, String blocker,
			Duration waited, Duration retryAfter) {
		super("No admission within " + DurationText.of(waited) + " for " + where(provider, region, model) + ": "
				+ blocker + " had no room"
				+ ((retryAfter != null) ? " (it would admit the call in " + DurationText.of(retryAfter) + ")" : "")
				+ ". Raise llm.quota.max-wait (or the call's MAX_WAIT), send fewer or smaller"
				+ " calls, or raise the limit if the provider allows more.", provider, region, model, dimension, null);
		this.waited = waited;
		this.retryAfter = retryAfter;
	}

	@Override
	public Duration getRetryAfter() {
		return this.retryAfter;
	}

	/**
	 * Returns how long the call waited.
	 * @return the wait
	 */
	public Duration getWaited() {
		return this.waited;
	}

}
