package dev.llmquota.autoconfigure;

import dev.llmquota.actuate.LlmQuotaHealthIndicator;
import dev.llmquota.core.QuotaEngine;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the {@code llmQuota} health component.
 */
@AutoConfiguration(after = LlmQuotaAutoConfiguration.class)
@ConditionalOnClass(name = { "org.springframework.boot.health.contributor.HealthIndicator",
		"org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator" })
@ConditionalOnBean(QuotaEngine.class)
// "llmquota" reads management.health.llmquota.enabled and the older llmQuota
// spelling alike
@ConditionalOnEnabledHealthIndicator("llmquota")
public final class LlmQuotaHealthAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "llmQuotaHealthIndicator")
	LlmQuotaHealthIndicator llmQuotaHealthIndicator(QuotaEngine engine, LlmQuotaProperties properties) {
		return new LlmQuotaHealthIndicator(engine, new Status(properties.getHealth().getExhaustedStatus().name()));
	}

}
