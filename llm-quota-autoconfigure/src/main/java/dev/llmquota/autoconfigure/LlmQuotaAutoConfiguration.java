package dev.llmquota.autoconfigure;

import dev.llmquota.client.LlmQuotaCalls;
import dev.llmquota.core.QuotaClock;
import dev.llmquota.core.QuotaConfig;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.core.QuotaStore;
import dev.llmquota.store.LocalQuotaStore;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * Auto-configuration of the llm-quota engine: its configuration, clock, store and the
 * engine itself.
 */
@AutoConfiguration
@ConditionalOnLlmQuotaEnabled
@EnableConfigurationProperties(LlmQuotaProperties.class)
public final class LlmQuotaAutoConfiguration {

	private static final Log logger = LogFactory.getLog("dev.llmquota");

	@Bean
	@ConditionalOnMissingBean
	QuotaConfig llmQuotaConfig(LlmQuotaProperties properties, Environment environment) {
		// Boot binds the properties as their bean is initialized; a bean made
		// while the configuration is still being read (a condition of another
		// library that creates beans, as Spring AI's Google GenAI one does)
		// gets them before Boot's binder is in place, and llm-quota would
		// govern nothing in silence. Binding again is harmless.
		PropertyKeys.checkKeptCharacters(environment);
		PropertyKeys.Bound bound = new PropertyKeys.Bound(new DurationsWithUnits(BindHandler.DEFAULT, environment));
		// environment variables name no key the handler could match (LLM_QUOTA_MAX_WAIT
		// lists as llm.quota.max.wait): Spring Boot leaves them out of this check, and
		// they are checked against what bound instead
		Binder.get(environment)
			.bind("llm.quota", Bindable.ofInstance(properties), new NoUnboundElementsBindHandler(bound,
					(source) -> !(source.getUnderlyingSource() instanceof SystemEnvironmentPropertySource)));
		PropertyKeys.checkHeaderVariables(environment, properties);
		PropertyKeys.unboundVariables(environment, bound)
			.forEach((name) -> logger.warn("The environment variable " + name + " sets no property under llm.quota:"
					+ " if it is meant for llm-quota, correct its name (LLM_QUOTA_ and the property's path in upper"
					+ " case, dots and dashes as underscores: LLM_QUOTA_MAX_WAIT for llm.quota.max-wait)"));
		return QuotaConfigFactory.create(properties);
	}

	@Bean
	@ConditionalOnMissingBean
	QuotaClock llmQuotaClock() {
		return QuotaClock.system();
	}

	@Bean
	@ConditionalOnMissingBean(QuotaStore.class)
	LocalQuotaStore llmQuotaStore(LlmQuotaProperties properties, Environment environment) {
		if (properties.getBackend() == LlmQuotaProperties.Backend.LOCAL) {
			PropertyKeys.firstUnder(environment, "llm.quota.redis")
				.ifPresent((name) -> logger.warn(name + " is set, but the books are this process's own"
						+ " (llm.quota.backend=local, the default): the Redis settings are not used. Set"
						+ " llm.quota.backend=redis to share the books across replicas, or remove them."));
		}
		if (properties.getBackend() == LlmQuotaProperties.Backend.REDIS) {
			// the Redis store's auto-configuration did not apply: its classes are missing
			throw new InvalidQuotaPropertyException("llm.quota.backend", "redis",
					"Spring Data Redis is not on the class path",
					"add spring-boot-starter-data-redis-reactive and set spring.data.redis.host (or url),"
							+ " or set llm.quota.backend=local.");
		}
		return new LocalQuotaStore();
	}

	@Bean
	@ConditionalOnMissingBean
	QuotaEngine llmQuotaEngine(QuotaConfig config, QuotaStore store, QuotaClock clock) {
		return new QuotaEngine(config, store, clock);
	}

	@Bean
	LlmQuotaLifecycle llmQuotaLifecycle(QuotaEngine engine, QuotaStore store) {
		return new LlmQuotaLifecycle(engine, store);
	}

	@Bean
	StartupSummary llmQuotaStartupSummary(QuotaEngine engine, LlmQuotaProperties properties,
			ListableBeanFactory beans) {
		return new StartupSummary(engine, properties, beans);
	}

	@Bean
	@ConditionalOnMissingBean
	LlmQuotaCalls llmQuotaCalls(QuotaEngine engine, LlmQuotaProperties properties) {
		return new LlmQuotaCalls(engine, QuotaConfigFactory.retry(properties.getRetry()),
				EntryCredentials.of(properties, engine.config()), RouteSettings.of(properties, engine.config()));
	}

}
