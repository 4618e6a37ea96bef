package dev.llmquota.test.simulator.quota;

import java.time.Duration;

/**
 * Why a call was not admitted: the binding dimension and the numbers a provider would
 * quote.
 *
 * @param dimension the dimension with the longest wait
 * @param scope {@code account} or the model's name
 * @param limit the published limit of that meter
 * @param used what the meter holds now
 * @param requested what the call needed
 * @param retryAfter wait until the call would fit, or {@code null} if it never fits as it
 * is (request too large)
 */
public record Refusal(Dimension dimension, String scope, long limit, long used, long requested, Duration retryAfter) {

	/**
	 * Whether the call can never fit, however long it waits.
	 * @return true when the request is larger than the meter's capacity
	 */
	public boolean tooLarge() {
		return this.retryAfter == null;
	}

}
