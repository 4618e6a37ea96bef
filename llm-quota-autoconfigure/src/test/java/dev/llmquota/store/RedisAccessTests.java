package dev.llmquota.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Set;

import dev.llmquota.core.Booking;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.Charge;
import dev.llmquota.core.BookingRequest;
import dev.llmquota.core.Dimension;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.sentinel.api.sync.RedisSentinelCommands;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import redis.embedded.RedisSentinel;
import redis.embedded.RedisServer;

import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisPassword;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The Redis store behind what Spring Boot's {@code spring.data.redis.*} settings set up
 * besides a plain server: a password ({@code requirepass}), an ACL user limited to
 * llm-quota's keys, and Sentinel with a failover it drives.
 */
@Tag("slow")
class RedisAccessTests {

	private static final Duration PATIENCE = Duration.ofSeconds(30);

	private final List<AutoCloseable> resources = new java.util.ArrayList<>();

	/** 6 a minute in a bucket of 10: Redis keeps a spent bucket's key for a minute. */
	private final BucketSpec tokens = new BucketSpec("llmq:{access}:pool:m:tokens-per-minute", BucketSpec.Scope.POOL,
			Dimension.TOKENS_PER_MINUTE, 6, 10, ZoneOffset.UTC);

	private final long now = 1_000_000_000_000L;

	private final Instant wall = Instant.parse("2026-12-01T12:00:00Z");

	@AfterEach
	void stop() throws Exception {
		for (int i = this.resources.size() - 1; i >= 0; i--) {
			this.resources.get(i).close();
		}
	}

	@Test
	void aPasswordProtectedServerKeepsTheBooks() throws IOException {
		int port = server("requirepass llmq-secret");
		RedisStandaloneConfiguration configuration = new RedisStandaloneConfiguration("127.0.0.1", port);
		configuration.setPassword(RedisPassword.of("llmq-secret"));
		RedisQuotaStore store = store(configuration);
		assertThat(book(store, 8)).isInstanceOf(Booking.Booked.class);
		assertThat(store.state(this.tokens, this.now, this.wall).remaining()).isEqualTo(2);
	}

	@Test
	void anAclUserLimitedToLlmQuotasKeysKeepsTheBooks() throws IOException {
		int port = server("user default off", "user llmq on >llmq-pw ~llmq:* +@all");
		RedisStandaloneConfiguration configuration = new RedisStandaloneConfiguration("127.0.0.1", port);
		configuration.setUsername("llmq");
		configuration.setPassword(RedisPassword.of("llmq-pw"));
		RedisQuotaStore store = store(configuration);
		assertThat(book(store, 8)).isInstanceOf(Booking.Booked.class);
		assertThat(book(store, 8)).as("2 left of 10: booked ahead").isInstanceOf(Booking.Booked.class);
		assertThat(store.status().reachable()).isTrue();
	}

	@Test
	void behindSentinelTheBooksFollowAFailoverItDrives() throws IOException {
		int master = server();
		int replica = server("replicaof 127.0.0.1 " + master);
		RedisClient client = RedisClient.create();
		this.resources.add(client::shutdown);
		StatefulRedisConnection<String, String> toReplica = client.connect(RedisURI.create("127.0.0.1", replica));
		await().atMost(PATIENCE).until(() -> toReplica.sync().info("replication").contains("master_link_status:up"));
		int sentinelPort = freePort();
		RedisSentinel sentinel = RedisSentinel.newRedisSentinel()
			.bind("127.0.0.1")
			.port(sentinelPort)
			.masterName("books")
			.masterPort(master)
			.quorumSize(1)
			.downAfterMilliseconds(1_000)
			.failOverTimeout(5_000)
			.build();
		sentinel.start();
		this.resources.add(sentinel::stop);
		RedisSentinelCommands<String, String> toSentinel = client
			.connectSentinel(RedisURI.create("127.0.0.1", sentinelPort))
			.sync();
		// the sentinel must know the replica before it can fail over to it
		await().atMost(PATIENCE).until(() -> !toSentinel.replicas("books").isEmpty());
		RedisQuotaStore store = store(new RedisSentinelConfiguration("books", Set.of("127.0.0.1:" + sentinelPort)));
		assertThat(book(store, 8)).isInstanceOf(Booking.Booked.class);
		await().atMost(PATIENCE).until(() -> "2".equals(toReplica.sync().hget(this.tokens.key(), "l")));
		toSentinel.failover("books");
		StatefulRedisConnection<String, String> toMaster = client.connect(RedisURI.create("127.0.0.1", master));
		await().ignoreExceptions()
			.atMost(PATIENCE)
			.until(() -> toReplica.sync().info("replication").contains("role:master"));
		// a write that reaches the old master before Sentinel demotes it is lost with it,
		// as any Redis write is; demoted, it drops its clients (this test's too) and
		// refuses writes, and the store finds the new master through Sentinel
		await().ignoreExceptions()
			.atMost(PATIENCE)
			.until(() -> toMaster.sync().info("replication").contains("role:slave"));
		await().ignoreExceptions().atMost(PATIENCE).untilAsserted(() -> {
			book(store, 1);
			assertThat(Long.parseLong(toReplica.sync().hget(this.tokens.key(), "l")))
				.as("booked on the new master, which kept the books (2 left of 10), not on fresh ones")
				.isLessThan(2);
		});
	}

	private Booking book(RedisQuotaStore store, long units) {
		return store.book(new BookingRequest(List.of(new Charge(this.tokens, units))), this.now, this.wall,
				Long.MAX_VALUE);
	}

	private int server(String... settings) throws IOException {
		int port = freePort();
		var builder = RedisServer.newRedisServer()
			.bind("127.0.0.1")
			.port(port)
			.setting("save \"\"")
			.setting("appendonly no");
		for (String setting : settings) {
			builder.setting(setting);
		}
		RedisServer server = builder.build();
		server.start();
		this.resources.add(server::stop);
		return port;
	}

	private RedisQuotaStore store(RedisConfiguration configuration) {
		LettuceConnectionFactory connectionFactory = new LettuceConnectionFactory(configuration,
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(5)).build());
		connectionFactory.afterPropertiesSet();
		connectionFactory.start();
		this.resources.add(connectionFactory::destroy);
		RedisQuotaStore store = new RedisQuotaStore(connectionFactory, new RedisQuotaStore.Settings(
				RedisQuotaStore.OnFailure.REJECT, 0.5, Duration.ofSeconds(30), Duration.ofSeconds(2)), () -> this.now);
		this.resources.add(store::close);
		return store;
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
