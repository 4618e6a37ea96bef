package dev.llmquota.client.okhttp;

import com.google.genai.types.HttpRetryOptions;
import okhttp3.Request;

import org.springframework.util.ClassUtils;

/**
 * Google's GenAI SDK adds its own retry interceptor after the application's (so below
 * llm-quota's), retrying 429s and server errors five times whatever the answer says. It
 * reads a per-request override from the request's tags: llm-quota sets it to a single
 * attempt on the calls it governs, which it retries itself, so retries never multiply.
 */
final class GoogleGenAiRetries {

	private static final boolean PRESENT = ClassUtils.isPresent("com.google.genai.types.HttpRetryOptions",
			GoogleGenAiRetries.class.getClassLoader());

	private GoogleGenAiRetries() {
	}

	/**
	 * Returns the request with the GenAI SDK's retries below this interceptor switched
	 * off, where that SDK is on the class path.
	 * @param request the request
	 * @return the request to proceed with
	 */
	static Request leftToLlmQuota(Request request) {
		return PRESENT ? Tagger.oneAttempt(request) : request;
	}

	/** Touches GenAI's types only where they are present. */
	private static final class Tagger {

		private static final HttpRetryOptions ONE_ATTEMPT = HttpRetryOptions.builder().attempts(1).build();

		static Request oneAttempt(Request request) {
			return request.newBuilder().tag(HttpRetryOptions.class, ONE_ATTEMPT).build();
		}

	}

}
