package dev.llmquota.autoconfigure;

import dev.llmquota.client.LlmQuotaCalls;
import dev.llmquota.client.anthropic.LlmQuotaAnthropicInterceptor;
import dev.llmquota.client.aws.LlmQuotaAwsHttpClients;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Auto-configuration of the adapters of the vendors' SDKs built by hand: each a bean to
 * pass to the SDK's client builder, present when that SDK is on the class path.
 */
@AutoConfiguration(after = LlmQuotaAutoConfiguration.class)
@ConditionalOnBean(LlmQuotaCalls.class)
public final class LlmQuotaSdkAutoConfiguration {

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = { "software.amazon.awssdk.http.SdkHttpClient",
			"software.amazon.awssdk.core.exception.NonRetryableException" })
	static class AwsConfiguration {

		@Bean
		@ConditionalOnMissingBean
		LlmQuotaAwsHttpClients llmQuotaAwsHttpClients(LlmQuotaCalls calls) {
			return new LlmQuotaAwsHttpClients(calls);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "com.anthropic.core.http.Interceptor")
	static class AnthropicConfiguration {

		@Bean
		@ConditionalOnMissingBean
		LlmQuotaAnthropicInterceptor llmQuotaAnthropicInterceptor(LlmQuotaCalls calls) {
			return new LlmQuotaAnthropicInterceptor(calls);
		}

	}

}
