package dev.llmquota;

import java.time.Duration;

/**
 * Admission was not possible within the call's maximum wait; names the dimension that
 * blocked it.
 */
public class QuotaWaitTimeoutException extends LlmQuotaException {

	private final Duration waited;

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
		super("No admission within " + waited + " for " + where(provider, region, model) + ": " + blocker
				+ " had no room. Raise llm.quota.max-wait (or the call's MAX_WAIT), send fewer or smaller"
				+ " calls, or raise the limit if the provider allows more.", provider, region, model, dimension, null);
		this.waited = waited;
	}

	/**
	 * Returns how long the call waited.
	 * @return the wait
	 */
	public Duration getWaited() {
		return this.waited;
	}

}
