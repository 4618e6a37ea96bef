package dev.llmquota.autoconfigure;

import dev.llmquota.client.LlmQuotaCalls;
import dev.llmquota.client.webclient.LlmQuotaExchangeFilterFunction;
import dev.llmquota.client.webclient.LlmQuotaWebClientCustomizer;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Auto-configuration that governs {@code WebClient} calls to LLM providers: the filter as
 * a bean, and a customizer that adds it to every auto-configured builder.
 */
@AutoConfiguration(after = LlmQuotaAutoConfiguration.class)
@ConditionalOnClass(WebClient.class)
@ConditionalOnBean(LlmQuotaCalls.class)
public final class LlmQuotaWebClientAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LlmQuotaExchangeFilterFunction llmQuotaExchangeFilterFunction(LlmQuotaCalls calls) {
		return new LlmQuotaExchangeFilterFunction(calls);
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "org.springframework.boot.webclient.WebClientCustomizer")
	static class CustomizerConfiguration {

		@Bean
		@ConditionalOnMissingBean
		LlmQuotaWebClientCustomizer llmQuotaWebClientCustomizer(LlmQuotaCalls calls) {
			return new LlmQuotaWebClientCustomizer(calls);
		}

		@Bean
		UngovernedBuilders<WebClient.Builder> llmQuotaWebClientBuilderCheck(ListableBeanFactory beans) {
			return new UngovernedBuilders<>(beans, WebClient.Builder.class,
					(builder) -> LlmQuotaWebClientCustomizer.governs(builder),
					"llmQuotaWebClientCustomizer.customize(builder) (inject LlmQuotaWebClientCustomizer), or build"
							+ " your client from the WebClient.Builder Spring Boot provides.");
		}

	}

}
