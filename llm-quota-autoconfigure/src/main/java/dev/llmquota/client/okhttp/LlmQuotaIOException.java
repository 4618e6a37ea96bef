package dev.llmquota.client.okhttp;

import java.io.IOException;

import dev.llmquota.LlmQuotaException;

/**
 * Carries an llm-quota exception through OkHttp, whose asynchronous path turns other
 * exceptions into cancellations; the cause is the contract exception.
 */
public class LlmQuotaIOException extends IOException {

	/**
	 * Wraps a contract exception.
	 * @param cause the contract exception
	 */
	public LlmQuotaIOException(LlmQuotaException cause) {
		super(cause.getMessage(), cause);
	}

	@Override
	public synchronized LlmQuotaException getCause() {
		return (LlmQuotaException) super.getCause();
	}

}
