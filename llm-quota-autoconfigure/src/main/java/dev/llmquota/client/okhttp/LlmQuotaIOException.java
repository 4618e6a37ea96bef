package dev.llmquota.client.okhttp;

import java.io.IOException;

import dev.llmquota.LlmQuotaException;

/**
 * Carried an llm-quota exception through OkHttp; the cause is the contract exception.
 *
 * @deprecated no longer thrown: the SDKs on OkHttp retry every {@code IOException}, so
 * llm-quota now throws the contract exception on a synchronous call and answers an
 * asynchronous one (see {@link LlmQuotaOkHttpInterceptor}); kept so code that catches it
 * compiles
 */
@Deprecated(since = "0.1.0")
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
