package dev.llmquota.autoconfigure;

import dev.llmquota.core.QuotaEngine;
import dev.llmquota.metrics.LlmQuotaMetrics;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of llm-quota's Micrometer meters; Spring Boot binds them to every
 * meter registry.
 */
@AutoConfiguration(after = LlmQuotaAutoConfiguration.class)
@ConditionalOnClass(name = "io.micrometer.core.instrument.binder.MeterBinder")
@ConditionalOnBean(QuotaEngine.class)
public final class LlmQuotaMetricsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LlmQuotaMetrics llmQuotaMetrics(QuotaEngine engine) {
		return new LlmQuotaMetrics(engine);
	}

}
