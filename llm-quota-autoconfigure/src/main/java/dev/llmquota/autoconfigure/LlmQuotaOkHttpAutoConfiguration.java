package dev.llmquota.autoconfigure;

import dev.llmquota.client.LlmQuotaCalls;
import dev.llmquota.client.okhttp.LlmQuotaOkHttpInterceptor;

import org.springframework.ai.anthropic.http.okhttp.AnthropicHttpClientBuilderCustomizer;
import org.springframework.ai.openai.http.okhttp.OpenAiHttpClientBuilderCustomizer;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Auto-configuration that governs OkHttp calls: the interceptor as a bean, registered
 * into Spring AI's OpenAI and Anthropic SDK clients through their builder hooks when
 * those are on the classpath.
 */
@AutoConfiguration(after = LlmQuotaAutoConfiguration.class)
@ConditionalOnClass(name = "okhttp3.Interceptor")
@ConditionalOnBean(LlmQuotaCalls.class)
public final class LlmQuotaOkHttpAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LlmQuotaOkHttpInterceptor llmQuotaOkHttpInterceptor(LlmQuotaCalls calls) {
		return new LlmQuotaOkHttpInterceptor(calls);
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "org.springframework.ai.openai.http.okhttp.OpenAiHttpClientBuilderCustomizer")
	static class SpringAiOpenAiConfiguration {

		@Bean
		OpenAiHttpClientBuilderCustomizer llmQuotaOpenAiHttpClientBuilderCustomizer(
				LlmQuotaOkHttpInterceptor interceptor) {
			return (builder) -> builder.interceptor(interceptor);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "org.springframework.ai.anthropic.http.okhttp.AnthropicHttpClientBuilderCustomizer")
	static class SpringAiAnthropicConfiguration {

		@Bean
		AnthropicHttpClientBuilderCustomizer llmQuotaAnthropicHttpClientBuilderCustomizer(
				LlmQuotaOkHttpInterceptor interceptor) {
			return (builder) -> builder.interceptor(interceptor);
		}

	}

}
