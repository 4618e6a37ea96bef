package dev.llmquota.autoconfigure;

import dev.llmquota.client.LlmQuotaCalls;
import dev.llmquota.client.httpcomponents.LlmQuotaRetryStrategy;
import dev.llmquota.client.restclient.LlmQuotaClientHttpRequestInterceptor;
import dev.llmquota.client.restclient.LlmQuotaRestClientCustomizer;
import dev.llmquota.client.restclient.LlmQuotaRestTemplateCustomizer;
import dev.llmquota.client.restclient.SpringAiErrorHandler;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.http.client.HttpComponentsClientHttpRequestFactoryBuilder;
import org.springframework.boot.http.client.autoconfigure.ClientHttpRequestFactoryBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;

/**
 * Auto-configuration that governs {@code RestClient} and {@code RestTemplate} calls to
 * LLM providers: the interceptor as a bean, and customizers that add it to every
 * auto-configured {@code RestClient.Builder} and {@code RestTemplateBuilder}.
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
	@ConditionalOnMissingBean
	@ConditionalOnClass(name = "org.springframework.boot.restclient.RestTemplateCustomizer")
	LlmQuotaRestTemplateCustomizer llmQuotaRestTemplateCustomizer(LlmQuotaClientHttpRequestInterceptor interceptor) {
		return new LlmQuotaRestTemplateCustomizer(interceptor);
	}

	@Bean
	@ConditionalOnClass(name = "org.springframework.boot.restclient.RestTemplateCustomizer")
	UngovernedBuilders<RestTemplate> llmQuotaRestTemplateCheck(ListableBeanFactory beans) {
		return new UngovernedBuilders<>(beans, RestTemplate.class, LlmQuotaRestTemplateCustomizer::governs,
				"llmQuotaRestTemplateCustomizer.customize(restTemplate) (inject LlmQuotaRestTemplateCustomizer), or"
						+ " build it from the RestTemplateBuilder Spring Boot provides.");
	}

	@Bean
	UngovernedBuilders<RestClient.Builder> llmQuotaRestClientBuilderCheck(ListableBeanFactory beans) {
		return new UngovernedBuilders<>(beans, RestClient.Builder.class, LlmQuotaRestClientCustomizer::governs,
				"llmQuotaRestClientCustomizer.customize(builder) (inject LlmQuotaRestClientCustomizer), or build your"
						+ " client from the RestClient.Builder Spring Boot provides.");
	}

	/**
	 * Spring AI's models on {@code RestClient} (Ollama's) map a server error to an
	 * exception its {@code RetryTemplate} retries: its error handler leaves alone what
	 * llm-quota hands on once its own attempts are spent, so retries never multiply.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "org.springframework.ai.retry.TransientAiException")
	static class SpringAiConfiguration {

		@Bean
		static BeanPostProcessor llmQuotaSpringAiErrorHandler() {
			return new BeanPostProcessor() {

				@Override
				public Object postProcessAfterInitialization(Object bean, String beanName) {
					return SpringAiErrorHandler.wrap(bean);
				}

			};
		}

	}

	/**
	 * Apache HttpClient 5, the request factory Spring Boot prefers when it is on the
	 * class path, retries a 429 or a 503 itself, under the interceptor: governed calls
	 * are left to llm-quota's retry, so the provider sees each of its attempts once.
	 * Ordered first, so that a retry strategy the application sets itself still wins.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = { "org.apache.hc.client5.http.impl.classic.HttpClientBuilder",
			"org.springframework.boot.http.client.autoconfigure.ClientHttpRequestFactoryBuilderCustomizer" })
	static class HttpComponentsConfiguration {

		@Bean
		@Order(Ordered.HIGHEST_PRECEDENCE)
		ClientHttpRequestFactoryBuilderCustomizer<HttpComponentsClientHttpRequestFactoryBuilder> llmQuotaHttpComponentsRetry(
				LlmQuotaCalls calls) {
			return (builder) -> builder
				.withHttpClientCustomizer((client) -> client.setRetryStrategy(new LlmQuotaRetryStrategy(calls)));
		}

	}

}
