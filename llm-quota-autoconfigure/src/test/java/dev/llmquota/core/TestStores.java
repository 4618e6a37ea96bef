package dev.llmquota.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.llmquota.store.EmbeddedRedis;
import dev.llmquota.store.LocalQuotaStore;
import dev.llmquota.store.RedisQuotaStore;
import dev.llmquota.store.TestRedisStore;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The two stores the engine's ordering, fairness, deadline and penalty tests run on: this
 * process's own books, and Redis shared by replicas (a real server, read on the test's
 * manual clock). Each test gets empty books; {@link #close()} ends what it opened.
 */
public final class TestStores implements AutoCloseable {

	/** Which store. */
	public enum Kind {

		/** This process's books. */
		LOCAL,

		/** Books in Redis, shared by replicas. */
		REDIS

	}

	private static LettuceConnectionFactory connectionFactory;

	private final List<AutoCloseable> opened = new ArrayList<>();

	/**
	 * Opens a store of a kind, on empty books.
	 * @param kind the kind
	 * @param clock the test's clock, which the Redis store reads its time from too
	 * @return the store
	 */
	public QuotaStore open(Kind kind, ManualClock clock) {
		QuotaStore store = switch (kind) {
			case LOCAL -> new LocalQuotaStore();
			case REDIS -> {
				LettuceConnectionFactory redis = connectionFactory();
				try (RedisConnection connection = redis.getConnection()) {
					connection.serverCommands().flushAll();
				}
				yield TestRedisStore.onClock(redis, new RedisQuotaStore.Settings(RedisQuotaStore.OnFailure.REJECT, 0.5,
						Duration.ofSeconds(30), Duration.ofSeconds(2)), clock::nanoTime);
			}
		};
		this.opened.add(store);
		return store;
	}

	/**
	 * Builds an engine on a store of a kind, closed with this fixture.
	 * @param config the configuration
	 * @param kind the store's kind
	 * @param clock the clock
	 * @return the engine
	 */
	public QuotaEngine engine(TestConfigs config, Kind kind, ManualClock clock) {
		QuotaEngine engine = config.engine(open(kind, clock), clock);
		// the engine closes first: it gives back what it holds before its store goes
		this.opened.add(this.opened.size() - 1, engine);
		return engine;
	}

	/**
	 * Builds a second replica on the books of the Redis store opened last, closed with
	 * this fixture: another process sharing them.
	 * @param config the configuration
	 * @param clock the clock
	 * @return the replica's engine
	 */
	public QuotaEngine replica(TestConfigs config, ManualClock clock) {
		QuotaStore store = TestRedisStore.onClock(connectionFactory(), new RedisQuotaStore.Settings(
				RedisQuotaStore.OnFailure.REJECT, 0.5, Duration.ofSeconds(30), Duration.ofSeconds(2)), clock::nanoTime);
		this.opened.add(store);
		QuotaEngine engine = config.engine(store, clock);
		this.opened.add(this.opened.size() - 1, engine);
		return engine;
	}

	private static synchronized LettuceConnectionFactory connectionFactory() {
		if (connectionFactory == null) {
			connectionFactory = EmbeddedRedis.shared().connectionFactory();
		}
		return connectionFactory;
	}

	@Override
	public void close() {
		try {
			for (AutoCloseable resource : this.opened) {
				resource.close();
			}
		}
		catch (Exception ex) {
			throw new IllegalStateException("Could not close what a test opened", ex);
		}
		finally {
			this.opened.clear();
		}
	}

}
