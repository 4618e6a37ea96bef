package dev.llmquota.autoconfigure;

import java.time.Duration;

import dev.llmquota.core.QuotaEngine;
import dev.llmquota.store.EmbeddedRedis;
import dev.llmquota.store.LocalQuotaStore;
import dev.llmquota.store.RedisQuotaStore;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Wiring of {@link LlmQuotaRedisAutoConfiguration}.
 */
class LlmQuotaRedisAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(DataRedisAutoConfiguration.class, DataRedisReactiveAutoConfiguration.class,
						LlmQuotaRedisAutoConfiguration.class, LlmQuotaAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=127.0.0.1",
				"spring.data.redis.port=" + EmbeddedRedis.shared().port());

	@Test
	void theLocalStoreUnlessRedisIsChosen() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(LocalQuotaStore.class)
			.doesNotHaveBean(RedisQuotaStore.class));
	}

	@Test
	void theRedisStoreOnSpringBootsReactiveConnectionWhenChosen() {
		this.runner.withPropertyValues("llm.quota.backend=redis").run((context) -> {
			assertThat(context).hasSingleBean(RedisQuotaStore.class).doesNotHaveBean(LocalQuotaStore.class);
			QuotaEngine engine = context.getBean(QuotaEngine.class);
			await().atMost(Duration.ofSeconds(10)).until(() -> engine.store().status().reachable());
		});
	}

	@Test
	void redisChosenWithoutSpringDataRedisStopsStartUpSayingWhatToAdd() {
		this.runner.withPropertyValues("llm.quota.backend=redis")
			.withClassLoader(new FilteredClassLoader(ReactiveRedisConnectionFactory.class))
			.run((context) -> {
				FailureAnalysis analysis = LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains("llm.quota.backend")
					.contains("Spring Data Redis is not on the class path");
				assertThat(analysis.getAction()).contains("spring-boot-starter-data-redis-reactive");
			});
	}

	@Test
	void aLocalShareOutsideZeroToOneStopsStartUpNamingTheProperty() {
		this.runner.withPropertyValues("llm.quota.backend=redis", "llm.quota.redis.local-share=2").run((context) -> {
			FailureAnalysis analysis = LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure());
			assertThat(analysis.getDescription()).contains("llm.quota.redis.local-share");
			assertThat(analysis.getAction()).contains("1 / the number of replicas");
		});
	}

	/**
	 * A timeout as long as the lease time would let a live call's lease lapse while its
	 * renewal is still awaited, freeing its slot for another call.
	 */
	@Test
	void aTimeoutAsLongAsTheLeaseTimeStopsStartUpNamingBoth() {
		this.runner
			.withPropertyValues("llm.quota.backend=redis", "llm.quota.redis.lease-time=30s",
					"llm.quota.redis.timeout=30s")
			.run((context) -> {
				FailureAnalysis analysis = LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains("llm.quota.redis.timeout")
					.contains("llm.quota.redis.lease-time");
				assertThat(analysis.getAction()).contains("500ms");
			});
	}

	@Test
	void lettuceReconnectsAtLeastEverySecondSoReplicasGoBackToTheSharedBooksTogether() {
		this.runner.withPropertyValues("llm.quota.backend=redis").run((context) -> {
			io.lettuce.core.resource.Delay delay = context.getBean(io.lettuce.core.resource.ClientResources.class)
				.reconnectDelay();
			// Lettuce's default grows to 30 s; after ten failed attempts it would wait
			// 512 ms
			// and after twenty about 30 s
			assertThat(delay.createDelay(40)).isLessThanOrEqualTo(Duration.ofSeconds(1));
		});
		this.runner.withPropertyValues("llm.quota.backend=redis", "llm.quota.redis.reconnect-delay=250ms")
			.run((context) -> assertThat(
					context.getBean(io.lettuce.core.resource.ClientResources.class).reconnectDelay().createDelay(40))
				.isEqualTo(Duration.ofMillis(250)));
	}

	@Test
	void aReconnectDelayOfZeroStopsStartUpNamingTheProperty() {
		this.runner.withPropertyValues("llm.quota.backend=redis", "llm.quota.redis.reconnect-delay=0s")
			.run((context) -> assertThat(
					LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure()).getDescription())
				.contains("llm.quota.redis.reconnect-delay"));
	}

	@Test
	void theEngineStopsAfterTheWebServerAndBeforeTheRedisConnectionAndReactorNetty() {
		// stopping runs from the highest phase down: the leases go back while the
		// connection still works
		assertThat(LlmQuotaLifecycle.PHASE)
			.isLessThan(
					org.springframework.boot.web.server.context.WebServerApplicationContext.START_STOP_LIFECYCLE_PHASE)
			.isGreaterThan(new org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory().getPhase())
			.isGreaterThan(new org.springframework.http.client.ReactorResourceFactory().getPhase());
	}

}
