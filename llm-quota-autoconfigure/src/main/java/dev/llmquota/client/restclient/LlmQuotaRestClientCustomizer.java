package dev.llmquota.client.restclient;

import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.web.client.RestClient;

/**
 * Adds llm-quota's interceptor to every auto-configured {@code RestClient.Builder}.
 */
public final class LlmQuotaRestClientCustomizer implements RestClientCustomizer {

	private final LlmQuotaClientHttpRequestInterceptor interceptor;

	/**
	 * Creates the customizer.
	 * @param interceptor the interceptor to add
	 */
	public LlmQuotaRestClientCustomizer(LlmQuotaClientHttpRequestInterceptor interceptor) {
		this.interceptor = interceptor;
	}

	/**
	 * Returns whether a builder carries llm-quota's interceptor.
	 * @param builder the builder
	 * @return whether its calls are governed
	 */
	public static boolean governs(RestClient.Builder builder) {
		boolean[] found = new boolean[1];
		builder.requestInterceptors((interceptors) -> found[0] = interceptors.stream()
			.anyMatch(LlmQuotaClientHttpRequestInterceptor.class::isInstance));
		return found[0];
	}

	@Override
	public void customize(RestClient.Builder builder) {
		builder.requestInterceptors((interceptors) -> {
			if (!interceptors.contains(this.interceptor)) {
				interceptors.add(this.interceptor);
			}
		});
	}

}
