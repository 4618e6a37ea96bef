package dev.llmquota.autoconfigure;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.llmquota.core.QuotaStore;
import dev.llmquota.store.RedisQuotaStore;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.data.redis.autoconfigure.ClientResourcesBuilderCustomizer;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;

/**
 * Auto-configuration of the Redis store ({@code llm.quota.backend=redis}), on the
 * reactive Redis connection Spring Boot makes from {@code spring.data.redis.*}.
 */
@AutoConfiguration(before = LlmQuotaAutoConfiguration.class,
		after = { DataRedisAutoConfiguration.class, DataRedisReactiveAutoConfiguration.class })
@ConditionalOnLlmQuotaEnabled
@ConditionalOnProperty(name = "llm.quota.backend", havingValue = "redis")
@ConditionalOnClass(ReactiveRedisConnectionFactory.class)
@EnableConfigurationProperties(LlmQuotaProperties.class)
public final class LlmQuotaRedisAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(QuotaStore.class)
	RedisQuotaStore llmQuotaStore(ObjectProvider<ReactiveRedisConnectionFactory> connectionFactory,
			LlmQuotaProperties properties) {
		ReactiveRedisConnectionFactory factory = connectionFactory.getIfAvailable();
		if (factory == null) {
			throw new InvalidQuotaPropertyException("llm.quota.backend", "redis",
					"no reactive Redis connection is configured",
					"add spring-boot-starter-data-redis-reactive and set spring.data.redis.host (or url),"
							+ " or set llm.quota.backend=local.");
		}
		return new RedisQuotaStore(factory, settings(properties.getRedis()));
	}

	/**
	 * Converts the Redis store's settings.
	 * @param redis the bound properties
	 * @return the settings
	 */
	private static RedisQuotaStore.Settings settings(LlmQuotaProperties.Redis redis) {
		String prefix = QuotaConfigFactory.PREFIX + "redis.";
		double share = redis.getLocalShare();
		if (!(share > 0 && share <= 1)) {
			throw new InvalidQuotaPropertyException(prefix + "local-share", share,
					"the share must be above 0 and at most 1",
					"set about 1 / the number of replicas, for example 0.25 (the default) for four.");
		}
		QuotaConfigFactory.positive(prefix + "lease-time", redis.getLeaseTime(), "for example 30s (the default)");
		QuotaConfigFactory.positive(prefix + "timeout", redis.getTimeout(), "for example 500ms (the default)");
		if (redis.getTimeout().compareTo(redis.getLeaseTime()) >= 0) {
			// a live call's lease would lapse while its renewal is still awaited, its
			// slot taken by another call
			throw new InvalidQuotaPropertyException(prefix + "timeout", redis.getTimeout(),
					"it must be shorter than " + prefix + "lease-time (" + redis.getLeaseTime()
							+ "), within which a live call's lease is renewed",
					"set a timeout of about 500ms (the default), or raise " + prefix + "lease-time.");
		}
		QuotaConfigFactory.positive(prefix + "reconnect-delay", redis.getReconnectDelay(),
				"for example 1s (the default)");
		return new RedisQuotaStore.Settings(RedisQuotaStore.OnFailure.valueOf(redis.getOnFailure().name()), share,
				redis.getLeaseTime(), redis.getTimeout());
	}

	/**
	 * Lettuce reconnects after an outage with a back-off that grows to 30 s; capped, the
	 * replicas go back to the shared books together, soon after Redis answers again.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ ClientResources.class, ClientResourcesBuilderCustomizer.class })
	static final class LettuceReconnect {

		@Bean
		ClientResourcesBuilderCustomizer llmQuotaReconnectDelay(LlmQuotaProperties properties) {
			Duration most = properties.getRedis().getReconnectDelay();
			return (builder) -> {
				if (!most.isNegative() && !most.isZero()) {
					builder.reconnectDelay(Delay.exponential(Duration.ofMillis(1), most, 2, TimeUnit.MILLISECONDS));
				}
			};
		}

	}

}
