package dev.llmquota.client.restclient;

import org.springframework.boot.restclient.RestTemplateCustomizer;
import org.springframework.web.client.RestTemplate;

/**
 * Adds llm-quota's interceptor to every {@code RestTemplate} built from Spring Boot's
 * {@code RestTemplateBuilder}: the same interceptor that governs {@code RestClient}, so a
 * {@code RestTemplate} call is admitted, retried and accounted as any other.
 */
public final class LlmQuotaRestTemplateCustomizer implements RestTemplateCustomizer {

	private final LlmQuotaClientHttpRequestInterceptor interceptor;

	/**
	 * Creates the customizer.
	 * @param interceptor the interceptor to add
	 */
	public LlmQuotaRestTemplateCustomizer(LlmQuotaClientHttpRequestInterceptor interceptor) {
		this.interceptor = interceptor;
	}

	/**
	 * Returns whether a template carries llm-quota's interceptor.
	 * @param template the template
	 * @return whether its calls are governed
	 */
	public static boolean governs(RestTemplate template) {
		return template.getInterceptors().stream().anyMatch(LlmQuotaClientHttpRequestInterceptor.class::isInstance);
	}

	@Override
	public void customize(RestTemplate template) {
		if (!template.getInterceptors().contains(this.interceptor)) {
			// last: the interceptors before it (authentication, signing) see the request
			// first, as they do on RestClient
			template.getInterceptors().add(this.interceptor);
		}
	}

}
