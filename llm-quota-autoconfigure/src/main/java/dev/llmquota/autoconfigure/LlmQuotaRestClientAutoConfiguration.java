package dev.llmquota.autoconfigure;

import dev.llmquota.client.LlmQuotaCalls;
import dev.llmquota.client.restclient.LlmQuotaClientHttpRequestInterceptor;
import dev.llmquota.client.restclient.LlmQuotaRestClientCustomizer;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.web.client.RestClient;

/**
 * Auto-configuration that governs {@code RestClient} calls to LLM providers: the
 * interceptor as a bean, and a customizer that adds it to every auto-configured builder.
 */
@AutoConfiguration(after = LlmQuotaAutoConfiguration.class)
@ConditionalOnClass(name = { "org.springframework.web.client.RestClient",
		"org.springframework.boot.restclient.RestClientCustomizer" })
@ConditionalOnBean(LlmQuotaCalls.class)
public final class LlmQuotaRestClientAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LlmQuotaClientHttpRequestInterceptor llmQuotaClientHttpRequestInterceptor(LlmQuotaCalls calls) {
		return new LlmQuotaClientHttpRequestInterceptor(calls);
	}

	@Bean
	@ConditionalOnMissingBean
	LlmQuotaRestClientCustomizer llmQuotaRestClientCustomizer(LlmQuotaClientHttpRequestInterceptor interceptor) {
		return new LlmQuotaRestClientCustomizer(interceptor);
	}

	@Bean
	UngovernedBuilders<RestClient.Builder> llmQuotaRestClientBuilderCheck(ListableBeanFactory beans) {
		return new UngovernedBuilders<>(beans, RestClient.Builder.class, LlmQuotaRestClientCustomizer::governs,
				"llmQuotaRestClientCustomizer.customize(builder) (inject LlmQuotaRestClientCustomizer), or build your"
						+ " client from the RestClient.Builder Spring Boot provides.");
	}

}
