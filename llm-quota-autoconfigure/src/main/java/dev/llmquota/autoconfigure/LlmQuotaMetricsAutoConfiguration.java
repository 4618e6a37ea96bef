package dev.llmquota.autoconfigure;

import dev.llmquota.client.LlmQuotaCalls;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.metrics.LlmQuotaMetrics;
import dev.llmquota.metrics.RouteMeters;
import io.github.resilience4j.micrometer.tagged.RetryMetricNames;
import io.github.resilience4j.micrometer.tagged.TaggedRetryMetrics;
import io.micrometer.core.instrument.binder.MeterBinder;

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

	/**
	 * Retries of the one retry policy, per provider entry: {@code llm.quota.retry.calls}
	 * tagged {@code name} (the entry's id) and {@code kind}.
	 * @param calls the adapters' calls
	 * @return the binder
	 */
	@Bean
	@ConditionalOnMissingBean(name = "llmQuotaRetryMetrics")
	@ConditionalOnBean(LlmQuotaCalls.class)
	MeterBinder llmQuotaRetryMetrics(LlmQuotaCalls calls) {
		return TaggedRetryMetrics.ofRetryRegistry(
				RetryMetricNames.custom().callsMetricName("llm.quota.retry.calls").build(),
				calls.retryPolicy().registry());
	}

	/**
	 * Meters of routes, tagged {@code route} and {@code target}.
	 * @param calls the adapters' calls
	 * @return the binder
	 */
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(LlmQuotaCalls.class)
	RouteMeters llmQuotaRouteMetrics(LlmQuotaCalls calls) {
		return new RouteMeters(calls.routes());
	}

}
