package dev.llmquota.autoconfigure;

import java.util.List;

import dev.llmquota.actuate.LlmQuotaEndpoint;
import dev.llmquota.client.LlmQuotaCalls;
import dev.llmquota.core.QuotaEngine;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the {@code llmquota} actuator endpoint.
 */
@AutoConfiguration(after = LlmQuotaAutoConfiguration.class)
@ConditionalOnClass(name = { "org.springframework.boot.actuate.endpoint.annotation.Endpoint",
		"org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint" })
@ConditionalOnBean(QuotaEngine.class)
@ConditionalOnAvailableEndpoint(LlmQuotaEndpoint.class)
public final class LlmQuotaEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LlmQuotaEndpoint llmQuotaEndpoint(QuotaEngine engine, ObjectProvider<LlmQuotaCalls> calls) {
		LlmQuotaCalls routing = calls.getIfAvailable();
		return new LlmQuotaEndpoint(engine, (routing != null) ? routing.routes() : List.of());
	}

}
