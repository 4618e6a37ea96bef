package dev.llmquota.autoconfigure;

import dev.llmquota.actuate.LlmQuotaEndpoint;
import dev.llmquota.actuate.LlmQuotaHealthIndicator;
import dev.llmquota.client.LlmQuotaCalls;
import dev.llmquota.metrics.LlmQuotaMetrics;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Wiring of the endpoint, health indicator and meters.
 */
class LlmQuotaActuatorAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LlmQuotaAutoConfiguration.class,
				LlmQuotaEndpointAutoConfiguration.class, LlmQuotaHealthAutoConfiguration.class,
				LlmQuotaMetricsAutoConfiguration.class, EndpointAutoConfiguration.class))
		.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com");

	@Test
	void theEndpointIsThereWhenExposed() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=llmquota")
			.run((context) -> assertThat(context).hasSingleBean(LlmQuotaEndpoint.class));
	}

	@Test
	void theEndpointIsAbsentWhenNotExposed() {
		this.runner.run((context) -> assertThat(context).doesNotHaveBean(LlmQuotaEndpoint.class));
	}

	@Test
	void theEndpointIsAbsentWhenItsAccessIsNone() {
		this.runner
			.withPropertyValues("management.endpoints.web.exposure.include=llmquota",
					"management.endpoint.llmquota.access=NONE")
			.run((context) -> assertThat(context).doesNotHaveBean(LlmQuotaEndpoint.class));
	}

	@Test
	void healthAndMetricsAreThereByDefault() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(LlmQuotaHealthIndicator.class);
			assertThat(context).hasSingleBean(LlmQuotaMetrics.class);
			Health health = context.getBean(LlmQuotaHealthIndicator.class).health(true);
			assertThat(health.getStatus()).isEqualTo(Status.UP);
		});
	}

	@Test
	void retriesAreMeteredPerProviderEntry() {
		this.runner.run((context) -> {
			SimpleMeterRegistry registry = new SimpleMeterRegistry();
			context.getBean("llmQuotaRetryMetrics", MeterBinder.class).bindTo(registry);
			// the one policy's instance of an entry, made on its first call
			context.getBean(LlmQuotaCalls.class).retryPolicy().of("openai");
			assertThat(registry.find("llm.quota.retry.calls")
				.tags("name", "openai", "kind", "successful_with_retry")
				.functionCounter()).isNotNull();
		});
	}

	@Test
	void theHealthIndicatorCanBeSwitchedOffTheSpringWay() {
		this.runner.withPropertyValues("management.health.llmquota.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(LlmQuotaHealthIndicator.class));
	}

	@Test
	void theHealthIndicatorCanBeSwitchedOffByItsComponentIdAsBefore() {
		this.runner.withPropertyValues("management.health.llmQuota.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(LlmQuotaHealthIndicator.class));
	}

	@Test
	void theHealthComponentKeepsItsIdLlmQuota() {
		// Spring Boot names a health component after its bean, without the suffix
		this.runner.run((context) -> assertThat(context).hasBean("llmQuotaHealthIndicator"));
	}

	@Test
	void nothingOfMicrometerWithoutMicrometer() {
		this.runner.withClassLoader(new FilteredClassLoader(MeterBinder.class))
			.run((context) -> assertThat(context).doesNotHaveBean(LlmQuotaMetrics.class));
	}

	@Test
	void nothingOfHealthWithoutTheHealthModule() {
		this.runner.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
			.run((context) -> assertThat(context).doesNotHaveBean(LlmQuotaHealthIndicator.class));
	}

}
