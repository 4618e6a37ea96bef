package dev.llmquota.autoconfigure;

import dev.llmquota.core.QuotaEngine;
import dev.llmquota.web.LlmQuotaExceptionHandler;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the answers a Spring MVC or WebFlux application gives when an
 * llm-quota exception escapes a controller: a problem detail with 429 or 503 instead of
 * 500 ({@code llm.quota.problem-details.enabled}).
 */
@AutoConfiguration(after = LlmQuotaAutoConfiguration.class)
@ConditionalOnWebApplication
@ConditionalOnClass(name = "org.springframework.web.bind.annotation.ControllerAdvice")
@ConditionalOnBean(QuotaEngine.class)
@ConditionalOnBooleanProperty(name = "llm.quota.problem-details.enabled", matchIfMissing = true)
public final class LlmQuotaProblemDetailsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LlmQuotaExceptionHandler llmQuotaExceptionHandler() {
		return new LlmQuotaExceptionHandler();
	}

}
