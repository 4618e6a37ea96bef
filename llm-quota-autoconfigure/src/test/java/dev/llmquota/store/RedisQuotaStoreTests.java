package dev.llmquota.store;

import java.time.Duration;

import dev.llmquota.core.QuotaStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The Redis store against the store contract, on a real Redis server, with the script
 * running on the test's clock.
 */
class RedisQuotaStoreTests extends QuotaStoreContractTests {

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		connectionFactory = EmbeddedRedis.shared().connectionFactory();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Override
	protected QuotaStore createStore() {
		return new RedisQuotaStore(connectionFactory, new RedisQuotaStore.Settings(RedisQuotaStore.OnFailure.REJECT,
				0.25, Duration.ofSeconds(30), Duration.ofSeconds(2)), () -> this.now);
	}

}
