package dev.llmquota.store;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import dev.llmquota.core.Booking;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.Charge;
import dev.llmquota.core.BookingRequest;
import dev.llmquota.core.Dimension;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import redis.embedded.RedisServer;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The Redis store on a real Redis Cluster: three masters with a replica each, started
 * from the embedded Redis binary and formed from the test with {@code CLUSTER MEET},
 * {@code ADDSLOTS} and {@code REPLICATE} (there is no {@code redis-cli} here). Every key
 * of a provider entry carries its hash tag, so one script touches one slot; a
 * {@code CLUSTER FAILOVER} of the master that holds an entry's keys keeps its books.
 */
@Tag("slow")
class RedisClusterTests {

	private static final Duration PATIENCE = Duration.ofSeconds(30);

	private static final int NODES = 6;

	private static final List<RedisServer> servers = new ArrayList<>();

	private static final List<Integer> ports = new ArrayList<>();

	private static RedisClient client;

	private static final java.util.Map<Integer, RedisCommands<String, String>> nodes = new java.util.HashMap<>();

	private final String entry = "llmq:{cluster-" + System.nanoTime() + "}:";

	/**
	 * 6 a minute in a bucket of 10: the script runs on the test's standing clock, and
	 * Redis keeps a spent bucket's key for a minute of its own.
	 */
	private final BucketSpec tokens = new BucketSpec(this.entry + "pool:m:tokens-per-minute", BucketSpec.Scope.POOL,
			Dimension.TOKENS_PER_MINUTE, 6, 10, ZoneOffset.UTC);

	private final BucketSpec requests = new BucketSpec(this.entry + "account:requests-per-minute",
			BucketSpec.Scope.ACCOUNT, Dimension.REQUESTS_PER_MINUTE, 60, 10, ZoneOffset.UTC);

	private final BucketSpec slot = new BucketSpec(this.entry + "account:concurrent-requests", BucketSpec.Scope.ACCOUNT,
			Dimension.CONCURRENT_REQUESTS, 2, 2, ZoneOffset.UTC);

	private final long now = 1_000_000_000_000L;

	private final Instant wall = Instant.parse("2026-12-01T12:00:00Z");

	private LettuceConnectionFactory connectionFactory;

	private RedisQuotaStore store;

	@BeforeAll
	static void formTheCluster() throws IOException {
		Path dir = Files.createTempDirectory("llm-quota-cluster");
		for (int i = 0; i < NODES; i++) {
			int port = freePort();
			RedisServer server = RedisServer.newRedisServer()
				.bind("127.0.0.1")
				.port(port)
				.setting("cluster-enabled yes")
				.setting("cluster-config-file nodes-" + port + ".conf")
				.setting("cluster-node-timeout 2000")
				.setting("dir " + dir)
				.setting("save \"\"")
				.setting("appendonly no")
				.build();
			server.start();
			servers.add(server);
			ports.add(port);
		}
		client = RedisClient.create();
		RedisCommands<String, String> first = node(0);
		for (int i = 1; i < NODES; i++) {
			first.clusterMeet("127.0.0.1", ports.get(i));
		}
		await().atMost(PATIENCE)
			.until(() -> IntStream.range(0, NODES).allMatch((i) -> node(i).clusterNodes().lines().count() == NODES));
		int[][] ranges = { { 0, 5460 }, { 5461, 10922 }, { 10923, 16383 } };
		for (int i = 0; i < 3; i++) {
			node(i).clusterAddSlots(IntStream.rangeClosed(ranges[i][0], ranges[i][1]).toArray());
		}
		for (int i = 3; i < NODES; i++) {
			String master = node(i - 3).clusterMyId();
			RedisCommands<String, String> replica = node(i);
			await().atMost(PATIENCE).until(() -> replica.clusterNodes().contains(master));
			replica.clusterReplicate(master);
		}
		await().atMost(PATIENCE)
			.until(() -> IntStream.range(0, NODES)
				.allMatch((i) -> node(i).clusterInfo().contains("cluster_state:ok")
						&& node(i).clusterNodes().lines().filter((line) -> line.contains("slave")).count() == 3));
	}

	@AfterAll
	static void stopTheCluster() throws IOException {
		if (client != null) {
			client.shutdown();
		}
		for (RedisServer server : servers) {
			server.stop();
		}
	}

	@BeforeEach
	@SuppressWarnings("deprecation") // the adaptive triggers' builder methods, in Lettuce
										// 7 (Boot 4.1)
	void connect() {
		// what Spring Boot's spring.data.redis.lettuce.cluster.refresh.* set: follow a
		// failover at once (adaptive) and look now and then (periodic)
		ClusterTopologyRefreshOptions refresh = ClusterTopologyRefreshOptions.builder()
			.enableAllAdaptiveRefreshTriggers()
			.enablePeriodicRefresh(Duration.ofSeconds(1))
			.build();
		LettuceClientConfiguration clientConfiguration = LettuceClientConfiguration.builder()
			.clientOptions(ClusterClientOptions.builder().topologyRefreshOptions(refresh).build())
			.commandTimeout(Duration.ofSeconds(5))
			.build();
		this.connectionFactory = new LettuceConnectionFactory(
				new RedisClusterConfiguration(ports.stream().map((port) -> "127.0.0.1:" + port).toList()),
				clientConfiguration);
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		this.store = new RedisQuotaStore(this.connectionFactory, new RedisQuotaStore.Settings(
				RedisQuotaStore.OnFailure.REJECT, 0.5, Duration.ofSeconds(30), Duration.ofSeconds(2)), () -> this.now);
	}

	@AfterEach
	void disconnect() {
		this.store.close();
		this.connectionFactory.destroy();
	}

	@Test
	void anEntrysKeysLiveInOneSlotAndItsBooksWorkThere() {
		Booking first = book(7);
		assertThat(first).isInstanceOf(Booking.Booked.class);
		assertThat(book(7)).as("3 tokens left of 10: booked ahead, at one every 10 s")
			.isInstanceOfSatisfying(Booking.Booked.class,
					(booked) -> assertThat(booked.start()).isEqualTo(this.now + Duration.ofSeconds(40).toNanos()));
		assertThat(book(1)).as("two calls hold the entry's two shared slots")
			.isInstanceOfSatisfying(Booking.Refused.class,
					(refused) -> assertThat(refused.bucket()).isEqualTo(this.slot));
		RedisCommands<String, String> any = node(0);
		long keySlot = any.clusterKeyslot(this.tokens.key());
		assertThat(List.of(this.requests.key(), this.slot.key(), QuotaScript.epochKey(this.tokens.key())))
			.allSatisfy((key) -> assertThat(any.clusterKeyslot(key)).isEqualTo(keySlot));
		assertThat(this.store.status().reachable()).isTrue();
	}

	@Test
	void aFailoverOfTheMasterHoldingAnEntryKeepsItsBooks() {
		assertThat(book(8)).isInstanceOf(Booking.Booked.class);
		int master = masterOf(node(0).clusterKeyslot(this.tokens.key()));
		int replica = replicaOf(master);
		// a manual failover: the replica catches up with its master, then takes over
		node(replica).clusterFailover(false);
		await().atMost(PATIENCE).until(() -> node(replica).info("replication").contains("role:master"));
		await().atMost(PATIENCE)
			.untilAsserted(() -> assertThat(this.store.state(this.tokens, this.now, this.wall).remaining())
				.as("the books moved with the slot: 2 of 10 left, not a fresh full bucket")
				.isEqualTo(2));
		assertThat(book(1)).as("and bookings go on, on the new master").isInstanceOf(Booking.Booked.class);
		assertThat(this.store.state(this.tokens, this.now, this.wall).remaining()).isEqualTo(1);
	}

	@Test
	void aKilledReplicasSlotsComeBackWithinTheLeaseTimeOnTheClusterToo() throws Exception {
		Duration lease = Duration.ofSeconds(2);
		String key = this.entry + "account:killed-concurrent-requests";
		Process holder = SlotHolder.start("cluster",
				String.join(",", ports.stream().map((port) -> "127.0.0.1:" + port).toList()), key, "3",
				Long.toString(lease.toMillis()));
		RedisQuotaStore live = new RedisQuotaStore(this.connectionFactory,
				new RedisQuotaStore.Settings(RedisQuotaStore.OnFailure.REJECT, 0.5, lease, Duration.ofSeconds(2)));
		try {
			Duration back = SlotHolder.killAndTimeTheSlotsReturn(holder, live, SlotHolder.slot(key, 3));
			assertThat(back).as("slots back after the kill").isLessThanOrEqualTo(lease.plusMillis(500));
		}
		finally {
			holder.destroyForcibly();
			live.close();
		}
	}

	@Test
	void twoReplicasKeepTheSharedInFlightLimitThroughAFailoverOfTheMasterHoldingTheirBooks() {
		// three calls at once for the account, 100 ms each; the provider refuses a fourth
		try (dev.llmquota.test.simulator.ProviderSimulator simulator = dev.llmquota.test.simulator.ProviderSimulator
			.builder()
			.model("test-model",
					(limits) -> limits.concurrentRequests(3).requestsPerMinute(100_000).tokensPerMinute(100_000_000))
			.latency((latency) -> latency.timeToFirstToken(Duration.ofMillis(100)).fixedOutputTokens(5))
			.start()) {
			String provider = "failover-" + System.nanoTime();
			String entry = "llm.quota.providers." + provider + ".";
			String[] properties = { entry + "base-url=" + simulator.baseUrl(), entry + "dialect=openai",
					entry + "models.test-model.concurrent-requests=3", "llm.quota.headroom=1.0",
					"llm.quota.max-wait=30s", "llm.quota.backend=redis",
					"spring.data.redis.cluster.nodes="
							+ String.join(",", ports.stream().map((port) -> "127.0.0.1:" + port).toList()),
					"spring.data.redis.lettuce.cluster.refresh.adaptive=true",
					"spring.data.redis.lettuce.cluster.refresh.period=1s" };
			List<dev.llmquota.client.GovernedApp> replicas = new ArrayList<>();
			try {
				for (int i = 0; i < 2; i++) {
					replicas.add(dev.llmquota.client.GovernedApp.start(properties));
				}
				java.util.concurrent.atomic.AtomicInteger done = new java.util.concurrent.atomic.AtomicInteger();
				java.util.Queue<Throwable> failures = new java.util.concurrent.ConcurrentLinkedQueue<>();
				List<reactor.core.publisher.Mono<Void>> loads = new ArrayList<>();
				String body = "{\"model\":\"test-model\",\"max_tokens\":10,"
						+ "\"messages\":[{\"role\":\"user\",\"content\":\"Say ok.\"}]}";
				for (dev.llmquota.client.GovernedApp replica : replicas) {
					org.springframework.web.reactive.function.client.WebClient client = replica.webClient();
					loads.add(reactor.core.publisher.Flux.interval(Duration.ofMillis(50))
						.take(Duration.ofSeconds(6))
						.flatMap((i) -> client.post()
							.uri(simulator.baseUrl() + "/v1/chat/completions")
							.contentType(org.springframework.http.MediaType.APPLICATION_JSON)
							.bodyValue(body)
							.retrieve()
							.bodyToMono(String.class)
							.doOnNext((answer) -> done.incrementAndGet())
							.onErrorResume((ex) -> {
								failures.add(ex);
								return reactor.core.publisher.Mono.empty();
							}), 1_000)
						.then());
				}
				// the load ends by itself: six seconds of calls, then those still waiting
				// (cancelling them would free their slots while the provider still counts
				// the calls sent)
				java.util.concurrent.CompletableFuture<Void> load = reactor.core.publisher.Mono.when(loads).toFuture();
				long start = System.nanoTime();
				await().atMost(PATIENCE).until(() -> System.nanoTime() - start > Duration.ofSeconds(2).toNanos());
				int master = masterOf(node(0).clusterKeyslot("llmq:{" + provider + "}:x"));
				int replica = replicaOf(master);
				node(replica).clusterFailover(false);
				await().atMost(PATIENCE).until(() -> node(replica).info("replication").contains("role:master"));
				int beforeFailover = done.get();
				await().atMost(PATIENCE).until(load::isDone);
				assertThat(replicas).as("both on the cluster's books at the end")
					.allSatisfy((app) -> assertThat(app.engine().store().status().reachable()).isTrue());
				assertThat(simulator.requestLog().refused()).as("calls the provider refused: over its three in flight")
					.isEmpty();
				assertThat(failures).as("failed calls").isEmpty();
				// about 30 a second fit; each admission is a round trip to the
				// cluster, so a loaded machine completes fewer (78 of 180
				// seen): at least a quarter, and calls go on after the failover
				assertThat(done.get()).as("completed calls").isGreaterThan(45);
				assertThat(done.get()).as("completed calls after the failover").isGreaterThan(beforeFailover);
			}
			finally {
				replicas.forEach(dev.llmquota.client.GovernedApp::close);
			}
		}
	}

	private Booking book(long units) {
		BookingRequest request = new BookingRequest(
				List.of(new Charge(this.tokens, units), new Charge(this.requests, 1)), List.of(this.slot), List.of(),
				null);
		return this.store.book(request, this.now, this.wall, Long.MAX_VALUE);
	}

	/** The node that is master of a slot now. */
	private static int masterOf(long slot) {
		for (int i = 0; i < NODES; i++) {
			RedisCommands<String, String> node = node(i);
			if (!node.info("replication").contains("role:master")) {
				continue;
			}
			String id = node.clusterMyId();
			for (String line : node.clusterNodes().lines().toList()) {
				String[] fields = line.split(" ");
				if (!fields[0].equals(id)) {
					continue;
				}
				for (int f = 8; f < fields.length; f++) {
					String[] range = fields[f].split("-");
					long from = Long.parseLong(range[0]);
					long to = (range.length > 1) ? Long.parseLong(range[1]) : from;
					if (slot >= from && slot <= to) {
						return i;
					}
				}
			}
		}
		throw new IllegalStateException("No master serves slot " + slot);
	}

	private static int replicaOf(int master) {
		String id = node(master).clusterMyId();
		for (int i = 0; i < NODES; i++) {
			if (i != master && node(i).info("replication").contains("role:slave")
					&& node(i).clusterNodes()
						.lines()
						.anyMatch((line) -> line.contains("myself") && line.contains(id))) {
				return i;
			}
		}
		throw new IllegalStateException("No replica of node " + master);
	}

	private static synchronized RedisCommands<String, String> node(int index) {
		return nodes.computeIfAbsent(index, (i) -> {
			StatefulRedisConnection<String, String> connection = client
				.connect(RedisURI.create("127.0.0.1", ports.get(i)));
			return connection.sync();
		});
	}

	/**
	 * A port free with its cluster bus port (10,000 above it), both below the range the
	 * system takes ports of outgoing connections from: a port it hands out is in that
	 * range, and the bus port above it may be taken by any connection meanwhile (seen
	 * failing: "Failed listening on port ... (cluster)").
	 */
	private static int freePort() {
		java.util.SplittableRandom random = new java.util.SplittableRandom();
		for (int tries = 0; tries < 1_000; tries++) {
			int port = 20_000 + random.nextInt(2_700);
			try (ServerSocket node = new ServerSocket(port, 1, InetAddress.getLoopbackAddress());
					ServerSocket bus = new ServerSocket(port + 10_000, 1, InetAddress.getLoopbackAddress())) {
				if (bus.getLocalPort() == node.getLocalPort() + 10_000) {
					return node.getLocalPort();
				}
			}
			catch (IOException ex) {
				// taken: another
			}
		}
		throw new IllegalStateException("No free port with a free cluster bus port from 20000 to 22699");
	}

}
