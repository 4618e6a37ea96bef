package dev.llmquota.bench;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import dev.llmquota.core.Demand;
import dev.llmquota.core.Pool;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.core.QuotaPermit;
import dev.llmquota.store.RedisQuotaStore;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import redis.embedded.RedisServer;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Part 3: admissions per second through the Redis store, and round trips per admission,
 * against Bucket4j's Lettuce compare-and-swap on the same four dimensions (one key), at 1
 * and 4 replicas on one key. Each replica is an engine (or a Bucket4j proxy) with its own
 * connection and 8 threads admitting as fast as they can; the Redis server is real (the
 * binary the embedded-redis artifact ships), on loopback.
 */
final class RedisBenchmark {

	private static final int THREADS_PER_REPLICA = 8;

	private static final Duration RUN = Duration.ofSeconds(10);

	private static final Duration WARM_UP = Duration.ofSeconds(3);

	private static final int ROUNDS = 3;

	private static final long LIMIT = 1_000_000_000_000L;

	private RedisBenchmark() {
	}

	static void run(Path results) throws Exception {
		int port = freePort();
		RedisServer server = RedisServer.newRedisServer()
			.bind("127.0.0.1")
			.port(port)
			.setting("save \"\"")
			.setting("appendonly no")
			.build();
		server.start();
		StringBuilder table = new StringBuilder();
		try {
			table.append(String.format(Locale.ROOT,
					"Redis: admissions a second on one pool of 4 dimensions (one key), %d threads a replica; each client"
							+ " warmed for %d s, then %d rounds of %d s each, the clients taking turns; every figure the"
							+ " median of the rounds."
							+ " Round trips per admission, from the server's command counts: llm-quota's are its EVALSHA"
							+ " calls; Bucket4j's compare-and-swap sends a GET and then a script that GETs once more,"
							+ " so its round trips are its GETs%n%n",
					THREADS_PER_REPLICA, WARM_UP.toSeconds(), ROUNDS, RUN.toSeconds()));
			table.append(String.format(Locale.ROOT, "%-10s %-30s %16s %14s%n", "replicas", "client", "admissions/s",
					"round trips"));
			RedisClient client = RedisClient.create("redis://127.0.0.1:" + port);
			int[] replicaCounts = { 1, 4 };
			for (int replicas : replicaCounts) {
				llmQuota(port, replicas, client, WARM_UP);
				bucket4j(client, replicas, WARM_UP);
			}
			Map<Row, List<Result>> rounds = new LinkedHashMap<>();
			for (int round = 0; round < ROUNDS; round++) {
				for (int replicas : replicaCounts) {
					rounds.computeIfAbsent(new Row(replicas, "llm-quota (Lua, one script)"), (row) -> new ArrayList<>())
						.add(llmQuota(port, replicas, client, RUN));
					rounds.computeIfAbsent(new Row(replicas, "Bucket4j (Lettuce CAS)"), (row) -> new ArrayList<>())
						.add(bucket4j(client, replicas, RUN));
				}
			}
			rounds
				.forEach((row, measured) -> table.append(line(row.replicas(), row.client(), Result.median(measured))));
			client.shutdown();
		}
		finally {
			server.stop();
		}
		Files.createDirectories(results);
		Files.writeString(results.resolve("redis.txt"), table.toString());
		System.out.println();
		System.out.print(table);
	}

	/** A line of the table: a client with that many replicas. */
	private record Row(int replicas, String client) {

	}

	private record Result(double perSecond, double roundTrips) {

		/** Each figure the median of the rounds'. */
		static Result median(List<Result> rounds) {
			return new Result(Benchmarks.median(rounds.stream().mapToDouble(Result::perSecond).toArray()),
					Benchmarks.median(rounds.stream().mapToDouble(Result::roundTrips).toArray()));
		}

	}

	private static String line(int replicas, String client, Result result) {
		return String.format(Locale.ROOT, "%-10d %-30s %,16.0f %14.2f%n", replicas, client, result.perSecond(),
				result.roundTrips());
	}

	private static Result llmQuota(int port, int replicas, RedisClient stats, Duration run)
			throws InterruptedException {
		List<LettuceConnectionFactory> factories = new ArrayList<>();
		List<QuotaEngine> engines = new ArrayList<>();
		for (int i = 0; i < replicas; i++) {
			LettuceConnectionFactory factory = new LettuceConnectionFactory(
					new RedisStandaloneConfiguration("127.0.0.1", port));
			factory.afterPropertiesSet();
			factory.start();
			factories.add(factory);
			RedisQuotaStore store = new RedisQuotaStore(factory, new RedisQuotaStore.Settings(
					RedisQuotaStore.OnFailure.REJECT, 0.25, Duration.ofSeconds(30), Duration.ofSeconds(2)));
			engines.add(new QuotaEngine(AdmissionBenchmark.engine(4, LIMIT).config(), store,
					dev.llmquota.core.QuotaClock.system()));
		}
		Demand demand = new Demand(100, 100);
		long commandsBefore = calls(stats, "evalsha") + calls(stats, "eval");
		long admitted = drive(replicas, run, (replica) -> {
			QuotaEngine engine = engines.get(replica);
			Pool pool = engine.pool("bench", "model");
			QuotaPermit permit = engine.acquire(pool, demand, null, null).block();
			permit.release();
		});
		long commands = calls(stats, "evalsha") + calls(stats, "eval") - commandsBefore;
		engines.forEach(QuotaEngine::close);
		engines.forEach((engine) -> engine.store().close());
		factories.forEach(LettuceConnectionFactory::destroy);
		return new Result(admitted / (double) run.toSeconds(), commands / (double) admitted);
	}

	private static Result bucket4j(RedisClient client, int replicas, Duration run) throws InterruptedException {
		List<StatefulRedisConnection<byte[], byte[]>> connections = new ArrayList<>();
		List<BucketProxy> buckets = new ArrayList<>();
		BucketConfiguration configuration = BucketConfiguration.builder()
			.addLimit(Bandwidth.builder().capacity(LIMIT).refillGreedy(LIMIT, Duration.ofHours(1)).build())
			.addLimit(Bandwidth.builder().capacity(LIMIT).refillGreedy(LIMIT, Duration.ofHours(1)).build())
			.addLimit(Bandwidth.builder().capacity(LIMIT).refillGreedy(LIMIT, Duration.ofHours(1)).build())
			.addLimit(Bandwidth.builder().capacity(LIMIT).refillGreedy(LIMIT, Duration.ofHours(1)).build())
			.build();
		byte[] key = "bucket4j:bench".getBytes(StandardCharsets.UTF_8);
		for (int i = 0; i < replicas; i++) {
			StatefulRedisConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE);
			connections.add(connection);
			buckets.add(Bucket4jLettuce.casBasedBuilder(connection).build().builder().build(key, () -> configuration));
		}
		long commandsBefore = calls(client, "get");
		long admitted = drive(replicas, run, (replica) -> buckets.get(replica).tryConsume(1));
		long commands = calls(client, "get") - commandsBefore;
		connections.forEach(StatefulRedisConnection::close);
		return new Result(admitted / (double) run.toSeconds(), commands / (double) admitted);
	}

	private interface Admission {

		void admit(int replica);

	}

	/**
	 * Admits from every thread of every replica for the run's length; returns admissions.
	 */
	private static long drive(int replicas, Duration run, Admission admission) throws InterruptedException {
		AtomicLong admitted = new AtomicLong();
		long end = System.nanoTime() + run.toNanos();
		List<Thread> threads = new ArrayList<>();
		for (int replica = 0; replica < replicas; replica++) {
			int which = replica;
			for (int i = 0; i < THREADS_PER_REPLICA; i++) {
				Thread thread = new Thread(() -> {
					while (System.nanoTime() < end) {
						admission.admit(which);
						admitted.incrementAndGet();
					}
				});
				thread.start();
				threads.add(thread);
			}
		}
		for (Thread thread : threads) {
			thread.join();
		}
		return admitted.get();
	}

	/** How often the server ran a command, from INFO commandstats. */
	private static long calls(RedisClient client, String command) {
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			String info = connection.sync().info("commandstats");
			for (String line : info.split("\r?\n")) {
				if (line.startsWith("cmdstat_" + command + ":calls=")) {
					String value = line.substring(line.indexOf("calls=") + 6);
					return Long.parseLong(value.substring(0, value.indexOf(',')));
				}
			}
			return 0;
		}
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

}
