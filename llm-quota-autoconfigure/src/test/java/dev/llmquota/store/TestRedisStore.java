package dev.llmquota.store;

import java.util.function.LongSupplier;

import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;

/**
 * Opens the Redis store on a test's clock, for tests outside this package.
 */
public final class TestRedisStore {

	private TestRedisStore() {
	}

	/**
	 * Opens a Redis store that reads its time from a test's clock.
	 * @param connectionFactory the connection
	 * @param settings the settings
	 * @param clock the test's monotonic clock
	 * @return the store
	 */
	public static RedisQuotaStore onClock(ReactiveRedisConnectionFactory connectionFactory,
			RedisQuotaStore.Settings settings, LongSupplier clock) {
		return new RedisQuotaStore(connectionFactory, settings, clock);
	}

}
