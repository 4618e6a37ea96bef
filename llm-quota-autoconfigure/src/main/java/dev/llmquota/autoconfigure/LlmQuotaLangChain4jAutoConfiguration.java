package dev.llmquota.autoconfigure;

import dev.llmquota.client.LlmQuotaCalls;
import dev.llmquota.client.langchain4j.LlmQuotaHttpClientBuilder;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of LangChain4j's governed HTTP client: a builder bean to pass to a
 * model's {@code httpClientBuilder(...)}. It is not registered as LangChain4j's default
 * (a {@code ServiceLoader} factory), which would conflict with LangChain4j's own.
 */
@AutoConfiguration(after = LlmQuotaAutoConfiguration.class)
@ConditionalOnClass(name = "dev.langchain4j.http.client.HttpClientBuilder")
@ConditionalOnBean(LlmQuotaCalls.class)
public final class LlmQuotaLangChain4jAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LlmQuotaHttpClientBuilder llmQuotaLangChain4jHttpClientBuilder(LlmQuotaCalls calls) {
		return new LlmQuotaHttpClientBuilder(calls);
	}

}
