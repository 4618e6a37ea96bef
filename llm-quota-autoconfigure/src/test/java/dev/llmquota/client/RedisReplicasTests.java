package dev.llmquota.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.llmquota.actuate.LlmQuotaHealthIndicator;
import dev.llmquota.core.Demand;
import dev.llmquota.core.Pool;
import dev.llmquota.core.QuotaPermit;
import dev.llmquota.core.StoreStatus;
import dev.llmquota.store.EmbeddedRedis;
import dev.llmquota.test.simulator.ProviderSimulator;
import io.micrometer.core.instrument.MeterRegistry;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Several replicas of one application, each its own Spring Boot context, sharing one real
 * Redis server and one simulated provider account: together they keep to the account's
 * quota, none starves, a dead replica's slots come back, and an outage of Redis neither
 * stops calls nor outlives Redis's return.
 */
@Tag("slow")
class RedisReplicasTests {

	private static final String MODEL = "test-model";

	private static final DialectCase DIALECT = DialectCase.OPENAI;

	private static final Duration PATIENCE = Duration.ofSeconds(30);

	private final List<AutoCloseable> resources = new ArrayList<>();

	/** A provider entry of this test's own: tests share one Redis server. */
	private final String provider = "provider-" + System.nanoTime();

	@AfterEach
	void closeEverything() throws Exception {
		for (int i = this.resources.size() - 1; i >= 0; i--) {
			this.resources.get(i).close();
		}
	}

	@Test
	void fourReplicasOfferedThreeTimesTheQuotaKeepToItTogetherAndShareItFairly() {
		// 1,200 requests per minute (20 per second); 80% headroom: 16 per second planned.
		ProviderSimulator simulator = simulator((sim) -> sim.window(Duration.ofSeconds(10))
			.model(MODEL, (limits) -> limits.requestsPerMinute(1_200).tokensPerMinute(2_000_000))
			.latency((latency) -> latency.timeToFirstToken(Duration.ofMillis(40)).fixedOutputTokens(10)));
		List<GovernedApp> replicas = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			replicas.add(replica(simulator, EmbeddedRedis.shared(), "models.test-model.requests-per-minute=1200",
					"models.test-model.tokens-per-minute=2000000", "llm.quota.max-wait=30s"));
		}
		// Each replica is offered 15 calls a second: 60 in all, three times the quota.
		Duration run = Duration.ofSeconds(8);
		List<ConcurrentLinkedQueue<Long>> done = new ArrayList<>();
		List<Disposable> load = new ArrayList<>();
		ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
		long start = System.nanoTime();
		for (GovernedApp replica : replicas) {
			ConcurrentLinkedQueue<Long> completions = new ConcurrentLinkedQueue<>();
			done.add(completions);
			WebClient client = replica.webClient();
			load.add(Flux.interval(Duration.ofMillis(1_000 / 15))
				.take(run)
				.flatMap((i) -> send(client, simulator).doOnNext((body) -> completions.add(System.nanoTime()))
					.onErrorResume((ex) -> {
						failures.add(ex);
						return Mono.empty();
					}), 1_000)
				.subscribe());
		}
		await().atMost(PATIENCE).until(() -> System.nanoTime() - start > run.toNanos());
		load.forEach(Disposable::dispose);
		assertThat(simulator.requestLog().refused()).as("provider refusals").isEmpty();
		assertThat(failures).as("failed calls").isEmpty();
		// Past the first two seconds (the buckets' initial burst), the replicas together
		// complete at least 90% of the planned 16 per second.
		long from = start + Duration.ofSeconds(2).toNanos();
		long to = start + run.toNanos();
		List<Long> steady = done.stream()
			.map((completions) -> completions.stream().filter((at) -> at >= from && at < to).count())
			.toList();
		long total = steady.stream().mapToLong(Long::longValue).sum();
		double perSecond = total / ((to - from) / 1e9);
		assertThat(perSecond).as("completed calls per second, all replicas").isGreaterThanOrEqualTo(0.9 * 16);
		// symmetric load, so each replica's share is within 20% of the mean
		assertThat(steady).as("each replica's share of %d calls", total)
			.allSatisfy((count) -> assertThat(count).isBetween(Math.round(total / 4.0 * 0.8),
					Math.round(total / 4.0 * 1.2)));
	}

	@Test
	void twoReplicasOnARouteSpreadOverItsTargetsFromTheSharedBooks() {
		// two deployments of 600 requests a minute each (10 a second), offered 1.5 times
		// their sum by two replicas through one route
		List<ProviderSimulator> deployments = new ArrayList<>();
		List<String> properties = new ArrayList<>(
				List.of("llm.quota.backend=redis", "llm.quota.headroom=1.0", "llm.quota.max-wait=30s",
						"spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + EmbeddedRedis.shared().port()));
		for (int i = 0; i < 2; i++) {
			ProviderSimulator deployment = simulator((sim) -> sim.window(Duration.ofSeconds(10))
				.model(MODEL, (limits) -> limits.requestsPerMinute(600))
				.latency((latency) -> latency.timeToFirstToken(Duration.ofMillis(20)).fixedOutputTokens(5)));
			deployments.add(deployment);
			String entry = "llm.quota.providers." + this.provider + "-" + i + ".";
			properties.addAll(List.of(entry + "base-url=" + deployment.baseUrl(), entry + "dialect=openai",
					entry + "models.test-model.requests-per-minute=600",
					"llm.quota.routes.r.targets[" + i + "].provider=" + this.provider + "-" + i,
					"llm.quota.routes.r.targets[" + i + "].model=" + MODEL));
		}
		List<GovernedApp> replicas = new ArrayList<>();
		for (int i = 0; i < 2; i++) {
			GovernedApp replica = GovernedApp.start(properties.toArray(String[]::new));
			this.resources.add(replica);
			replicas.add(replica);
		}
		Load load = offer(replicas,
				(client) -> client.post()
					.uri(dev.llmquota.LlmQuota.route("r") + DIALECT.path(MODEL, false))
					.contentType(MediaType.APPLICATION_JSON)
					.bodyValue(DIALECT.body(MODEL, 50, false, "Summarise this."))
					.retrieve()
					.bodyToMono(String.class),
				15, Duration.ofSeconds(5));
		load.awaitEnd();
		for (ProviderSimulator deployment : deployments) {
			assertThat(deployment.requestLog().refused()).as("provider refusals").isEmpty();
		}
		assertThat(load.failures).as("failed calls").isEmpty();
		for (GovernedApp replica : replicas) {
			List<Long> taken = replica.context()
				.getBean(LlmQuotaCalls.class)
				.routes()
				.get(0)
				.targets()
				.stream()
				.map((target) -> target.taken())
				.toList();
			long all = taken.stream().mapToLong(Long::longValue).sum();
			assertThat(taken).as("each replica's attempts per deployment")
				.allSatisfy((count) -> assertThat(count).isGreaterThanOrEqualTo(all / 3));
		}
		// past the initial burst, together they complete at least 80% of the 20 a second
		long from = load.start + Duration.ofSeconds(2).toNanos();
		long to = load.start + load.run.toNanos();
		long steady = load.completions.stream().filter((at) -> at >= from && at < to).count();
		assertThat(steady / ((to - from) / 1e9)).as("completed calls per second").isGreaterThanOrEqualTo(0.8 * 20);
	}

	@Test
	void aRoutedCallTheSharedBooksWillNotTakeSoonMovesToAnotherTarget() {
		ProviderSimulator first = simulator((sim) -> sim.model(MODEL, (limits) -> limits.requestsPerMinute(600)));
		ProviderSimulator second = simulator((sim) -> sim.model(MODEL, (limits) -> limits.requestsPerMinute(600)));
		String a = this.provider + "-a";
		String b = this.provider + "-b";
		// the first deployment's shared quota: two calls a minute
		String[] properties = { "llm.quota.backend=redis", "llm.quota.headroom=1.0", "llm.quota.max-wait=10s",
				"spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + EmbeddedRedis.shared().port(),
				"llm.quota.providers." + a + ".base-url=" + first.baseUrl(),
				"llm.quota.providers." + a + ".dialect=openai", "llm.quota.providers." + a + ".burst-window=60s",
				"llm.quota.providers." + a + ".models.test-model.requests-per-minute=2",
				"llm.quota.providers." + b + ".base-url=" + second.baseUrl(),
				"llm.quota.providers." + b + ".dialect=openai",
				"llm.quota.providers." + b + ".models.test-model.requests-per-minute=600",
				"llm.quota.routes.r.targets[0].provider=" + a, "llm.quota.routes.r.targets[0].model=" + MODEL,
				"llm.quota.routes.r.targets[1].provider=" + b, "llm.quota.routes.r.targets[1].model=" + MODEL };
		GovernedApp spender = GovernedApp.start(properties);
		this.resources.add(spender);
		GovernedApp router = GovernedApp.start(properties);
		this.resources.add(router);
		// one replica spends the first deployment's minute, calling it directly
		send(spender.webClient(), first).block(PATIENCE);
		send(spender.webClient(), first).block(PATIENCE);
		// the other has heard nothing of it: the first looks free, the shared books say
		// 30 s; the call leaves it for the second instead of waiting out its max-wait
		long start = System.nanoTime();
		router.webClient()
			.post()
			.uri(dev.llmquota.LlmQuota.route("r") + DIALECT.path(MODEL, false))
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(DIALECT.body(MODEL, 50, false, "Summarise this."))
			.retrieve()
			.bodyToMono(String.class)
			.block(PATIENCE);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
		List<Route.Target> targets = router.context().getBean(LlmQuotaCalls.class).routes().get(0).targets();
		assertThat(targets.get(0).taken()).isZero();
		assertThat(targets.get(1).taken()).isOne();
		assertThat(first.requestLog().refused()).isEmpty();
	}

	@Test
	void aReplicaThatDiesMidCallGivesItsSlotBackWhenItsLeaseExpires() {
		// Streams of 100 tokens, 100 ms apart: a call stays in flight for ten seconds.
		ProviderSimulator simulator = simulator(
				(sim) -> sim.latency((latency) -> latency.timeToFirstToken(Duration.ofMillis(20))
					.perOutputToken(Duration.ofMillis(100))
					.fixedOutputTokens(100)));
		String[] properties = { "llm.quota.headroom=1.0", "models.test-model.concurrent-requests=1",
				"llm.quota.redis.lease-time=2s", "llm.quota.max-wait=20s" };
		GovernedApp doomed = replica(simulator, EmbeddedRedis.shared(), properties);
		GovernedApp survivor = replica(simulator, EmbeddedRedis.shared(), properties);
		// The doomed replica takes the one shared slot and never gives it back: its
		// process (here, its Redis connection) goes while the call streams.
		Disposable lost = streamed(doomed.webClient(), simulator).subscribe();
		this.resources.add(lost::dispose);
		await().atMost(PATIENCE).until(() -> doomed.engine().inFlight(account(doomed)) == 1);
		doomed.context().getBean(LettuceConnectionFactory.class).destroy();
		long died = System.nanoTime();
		assertThat(send(survivor.webClient(), simulator).block(PATIENCE)).isNotEmpty();
		assertThat(Duration.ofNanos(System.nanoTime() - died)).as("the survivor waits for the dead replica's lease")
			.isGreaterThan(Duration.ofMillis(1_000))
			.isLessThan(Duration.ofSeconds(9));
	}

	@Test
	void aLiveReplicaRenewsItsLeaseSoALongCallKeepsItsSlot() {
		// Streams of 60 tokens, 50 ms apart: three seconds, three lease times.
		ProviderSimulator simulator = simulator(
				(sim) -> sim.latency((latency) -> latency.timeToFirstToken(Duration.ofMillis(20))
					.perOutputToken(Duration.ofMillis(50))
					.fixedOutputTokens(60)));
		String[] properties = { "llm.quota.headroom=1.0", "models.test-model.concurrent-requests=1",
				"llm.quota.redis.lease-time=1s", "llm.quota.max-wait=20s" };
		GovernedApp streaming = replica(simulator, EmbeddedRedis.shared(), properties);
		GovernedApp other = replica(simulator, EmbeddedRedis.shared(), properties);
		AtomicLong streamEnded = new AtomicLong();
		Disposable stream = streamed(streaming.webClient(), simulator)
			.doOnTerminate(() -> streamEnded.set(System.nanoTime()))
			.subscribe();
		this.resources.add(stream::dispose);
		await().atMost(PATIENCE).until(() -> streaming.engine().inFlight(account(streaming)) == 1);
		send(other.webClient(), simulator).block(PATIENCE);
		long otherAdmitted = System.nanoTime();
		assertThat(streamEnded.get()).as("the stream ended before the other call got the slot").isPositive();
		assertThat(otherAdmitted).isGreaterThanOrEqualTo(streamEnded.get());
	}

	@Test
	void aReplicaShuttingDownGivesItsSlotsBackAtOnce() {
		ProviderSimulator simulator = simulator(
				(sim) -> sim.latency((latency) -> latency.timeToFirstToken(Duration.ofMillis(20))
					.perOutputToken(Duration.ofMillis(100))
					.fixedOutputTokens(100)));
		String[] properties = { "llm.quota.headroom=1.0", "models.test-model.concurrent-requests=1",
				"llm.quota.redis.lease-time=30s", "llm.quota.max-wait=20s" };
		GovernedApp stopping = replica(simulator, EmbeddedRedis.shared(), properties);
		GovernedApp other = replica(simulator, EmbeddedRedis.shared(), properties);
		// The stream ends with its replica: disposing it after the replica's event loops
		// stopped would throw Reactor Netty's "event executor terminated" at the test.
		streamed(stopping.webClient(), simulator).subscribe((body) -> {
		}, (ex) -> {
		});
		await().atMost(PATIENCE).until(() -> stopping.engine().inFlight(account(stopping)) == 1);
		long closing = System.nanoTime();
		stopping.close();
		assertThat(send(other.webClient(), simulator).block(PATIENCE)).isNotEmpty();
		assertThat(Duration.ofNanos(System.nanoTime() - closing)).as("far less than the 30 s lease time")
			.isLessThan(Duration.ofSeconds(10));
	}

	@Test
	void everyShutdownGivesItsLeasesBackBeforeTheRedisConnectionCloses() {
		// the lifecycle's release against the connection's shutdown, twenty times: each
		// stopping replica holds the one shared slot when it stops
		ProviderSimulator simulator = simulator((sim) -> {
		});
		String[] properties = { "llm.quota.headroom=1.0", "models.test-model.concurrent-requests=1",
				"llm.quota.redis.lease-time=30s" };
		GovernedApp other = replica(simulator, EmbeddedRedis.shared(), properties);
		Pool otherPool = other.engine().pool(this.provider, MODEL);
		for (int round = 0; round < 20; round++) {
			GovernedApp stopping = replica(simulator, EmbeddedRedis.shared(), properties);
			Pool pool = stopping.engine().pool(this.provider, MODEL);
			assertThat(stopping.engine().acquire(pool, new Demand(10, 10), null, null).block(PATIENCE)).isNotNull();
			stopping.close();
			QuotaPermit next = other.engine()
				.acquire(otherPool, new Demand(10, 10), null, Duration.ofSeconds(5))
				.onErrorResume((ex) -> Mono.empty())
				.block(PATIENCE);
			assertThat(next).as("round %d: the slot is free at once, not after the 30 s lease", round).isNotNull();
			next.release();
		}
	}

	@Test
	void callsKeepFlowingOnLocalBooksWhileRedisIsDownAndTheSharedBooksResumeWhenItIsBack() {
		EmbeddedRedis redis = EmbeddedRedis.own();
		this.resources.add(redis);
		ProviderSimulator simulator = simulator((sim) -> sim
			.latency((latency) -> latency.timeToFirstToken(Duration.ofMillis(20)).fixedOutputTokens(5)));
		GovernedApp replica = replica(simulator, redis, "models.test-model.requests-per-minute=6000",
				"llm.quota.redis.timeout=200ms", "llm.quota.redis.local-share=0.5");
		WebClient client = replica.webClient();
		assertThat(send(client, simulator).block(PATIENCE)).isNotEmpty();
		assertThat(status(replica).reachable()).isTrue();

		redis.stop();
		for (int i = 0; i < 5; i++) {
			// each call is answered well within the wait that would mean a hang
			assertThat(send(client, simulator).block(Duration.ofSeconds(5))).isNotEmpty();
		}
		StoreStatus down = status(replica);
		assertThat(down.reachable()).isFalse();
		assertThat(down.fallback()).isTrue();
		assertThat(down.fallbacks()).isEqualTo(1);
		assertThat(replica.engine().store().isAvailable()).as("a fallback serves").isTrue();
		Health health = replica.context().getBean(LlmQuotaHealthIndicator.class).health(true);
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(health.getDetails().get("store")).asInstanceOf(InstanceOfAssertFactories.MAP)
			.containsEntry("reachable", false)
			.containsEntry("serving", "local fallback")
			.containsEntry("fallbacks", 1L);
		assertThat(replica.context().getBean(MeterRegistry.class).get("llm.quota.store.fallback").gauge().value())
			.isEqualTo(1);

		redis.start();
		await().atMost(PATIENCE).until(() -> status(replica).reachable());
		assertThat(send(client, simulator).block(PATIENCE)).isNotEmpty();
		assertThat(status(replica).fallback()).isFalse();
	}

	@Test
	void withOnFailureRejectCallsFailFastWhileRedisIsDown() {
		EmbeddedRedis redis = EmbeddedRedis.own();
		this.resources.add(redis);
		ProviderSimulator simulator = simulator((sim) -> {
		});
		GovernedApp replica = replica(simulator, redis, "llm.quota.redis.on-failure=reject",
				"llm.quota.redis.timeout=200ms");
		redis.stop();
		AtomicInteger refused = new AtomicInteger();
		for (int i = 0; i < 3; i++) {
			send(replica.webClient(), simulator)
				.onErrorResume(dev.llmquota.QuotaStoreUnavailableException.class, (ex) -> {
					refused.incrementAndGet();
					return Mono.just("refused");
				})
				.block(Duration.ofSeconds(5));
		}
		assertThat(refused.get()).isEqualTo(3);
		assertThat(simulator.requestLog().size()).as("nothing reached the provider").isZero();
		await().atMost(PATIENCE).until(() -> !replica.engine().store().isAvailable());
		assertThat(replica.context().getBean(LlmQuotaHealthIndicator.class).health(true).getStatus())
			.as("nothing serves calls")
			.isEqualTo(Status.DOWN);
	}

	@Test
	void threeReplicasKeepTheSharedInFlightLimitWhileRedisPausesBelowAndAboveItsTimeout() {
		// Four calls at once for the whole account, 150 ms each; the provider refuses a
		// fifth. Redis stops answering three times (CLIENT PAUSE, every command waits):
		// 300 ms, under the 500 ms timeout, then twice 800 ms, over it.
		EmbeddedRedis redis = EmbeddedRedis.own();
		this.resources.add(redis);
		ProviderSimulator simulator = simulator((sim) -> sim
			.model(MODEL,
					(limits) -> limits.concurrentRequests(4).requestsPerMinute(100_000).tokensPerMinute(100_000_000))
			.latency((latency) -> latency.timeToFirstToken(Duration.ofMillis(150)).fixedOutputTokens(5)));
		List<GovernedApp> replicas = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			replicas.add(replica(simulator, redis, "llm.quota.headroom=1.0", "models.test-model.concurrent-requests=4",
					"llm.quota.redis.timeout=500ms", "llm.quota.max-wait=30s"));
		}
		Load load = offer(replicas, simulator, 10, Duration.ofSeconds(8), "Summarise this.");
		LettuceConnectionFactory admin = redis.connectionFactory();
		this.resources.add(admin::destroy);
		for (long pause : new long[] { 300, 800, 800 }) {
			long at = System.nanoTime() + Duration.ofSeconds(2).toNanos();
			await().atMost(PATIENCE).until(() -> System.nanoTime() >= at);
			pause(admin, Duration.ofMillis(pause));
		}
		load.awaitEnd();
		assertThat(simulator.requestLog().refused()).as("calls the provider refused: over its four in flight")
			.isEmpty();
		assertThat(load.failures).as("failed calls").isEmpty();
		// about 25 a second fit; well over half of 8 s of them, pauses and all
		assertThat(load.completed()).as("completed calls").isGreaterThan(100);
	}

	@Test
	void anOutageAndTheEmptyRedisAfterItKeepTheReplicasWithinTheTokenQuota() {
		// 60,000 tokens a minute, a 10 s provider window; each call uses about 200 (its
		// input and 5 generated), so about 5 a second fit, and the replicas offer 36.
		// Redis goes down for 5 s and comes back empty (no persistence).
		EmbeddedRedis redis = EmbeddedRedis.own();
		this.resources.add(redis);
		long quota = 60_000;
		ProviderSimulator simulator = simulator((sim) -> sim.window(Duration.ofSeconds(10))
			.model(MODEL, (limits) -> limits.tokensPerMinute(quota).requestsPerMinute(100_000))
			.latency((latency) -> latency.timeToFirstToken(Duration.ofMillis(30)).fixedOutputTokens(5)));
		double headroom = 0.9;
		List<GovernedApp> replicas = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			replicas.add(replica(simulator, redis, "llm.quota.headroom=" + headroom,
					"models.test-model.tokens-per-minute=" + quota, "llm.quota.redis.timeout=200ms",
					"llm.quota.max-wait=30s"));
		}
		Load load = offer(replicas, simulator, 12, Duration.ofSeconds(15), "Summarise this long text. ".repeat(40));
		long down = load.start + Duration.ofSeconds(4).toNanos();
		await().atMost(PATIENCE).until(() -> System.nanoTime() >= down);
		redis.stop();
		long up = down + Duration.ofSeconds(5).toNanos();
		await().atMost(PATIENCE).until(() -> System.nanoTime() >= up);
		redis.start();
		load.awaitEnd();
		assertThat(simulator.requestLog().refused()).as("calls the provider refused").isEmpty();
		// The busiest 10 s once the first 2 s are past (the books start full, a burst
		// window of 2 s, as the provider's do), as a rate, against the quota times the
		// headroom.
		List<dev.llmquota.test.simulator.RequestRecord> served = simulator.requestLog()
			.records()
			.stream()
			.filter((record) -> record.outcome() == dev.llmquota.test.simulator.RequestRecord.Outcome.COMPLETED)
			.toList();
		long first = served.stream().mapToLong(dev.llmquota.test.simulator.RequestRecord::arrivalNanos).min().orElse(0);
		long window = Duration.ofSeconds(10).toNanos();
		long busiest = 0;
		for (dev.llmquota.test.simulator.RequestRecord from : served) {
			if (from.arrivalNanos() < first + Duration.ofSeconds(2).toNanos()) {
				continue;
			}
			long tokens = served.stream()
				.filter((record) -> record.arrivalNanos() >= from.arrivalNanos()
						&& record.arrivalNanos() < from.arrivalNanos() + window)
				.mapToLong((record) -> record.inputTokens() + record.outputTokens())
				.sum();
			busiest = Math.max(busiest, tokens);
		}
		double perMinute = busiest * 6.0;
		assertThat(perMinute / (quota * headroom)).as("busiest 10 s, per minute, over quota x headroom")
			.isLessThanOrEqualTo(1.1);
		assertThat(load.completed()).as("calls kept flowing").isGreaterThan(30);
	}

	/** Calls offered to each replica at a fixed rate for a while, however they fare. */
	private Load offer(List<GovernedApp> replicas, ProviderSimulator simulator, int perSecond, Duration run,
			String prompt) {
		return offer(replicas, (client) -> send(client, simulator, prompt), perSecond, run);
	}

	/** Each replica sends {@code perSecond} calls a second for {@code run}. */
	private Load offer(List<GovernedApp> replicas, java.util.function.Function<WebClient, Mono<String>> call,
			int perSecond, Duration run) {
		Load load = new Load(System.nanoTime(), run);
		for (GovernedApp replica : replicas) {
			WebClient client = replica.webClient();
			Disposable calls = Flux.interval(Duration.ofMillis(1_000 / perSecond))
				.take(run)
				.flatMap((i) -> call.apply(client).doOnNext((body) -> {
					load.done.incrementAndGet();
					load.completions.add(System.nanoTime());
				}).onErrorResume((ex) -> {
					load.failures.add(ex);
					return Mono.empty();
				}), 1_000)
				.subscribe();
			this.resources.add(calls::dispose);
		}
		return load;
	}

	private static final class Load {

		final long start;

		final Duration run;

		final AtomicInteger done = new AtomicInteger();

		final ConcurrentLinkedQueue<Long> completions = new ConcurrentLinkedQueue<>();

		final ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();

		Load(long start, Duration run) {
			this.start = start;
			this.run = run;
		}

		void awaitEnd() {
			await().atMost(PATIENCE).until(() -> System.nanoTime() - this.start > this.run.toNanos());
		}

		int completed() {
			return this.done.get();
		}

	}

	/** Redis answers no command, from any client, for a while. */
	private static void pause(LettuceConnectionFactory admin, Duration duration) {
		try (org.springframework.data.redis.connection.RedisConnection connection = admin.getConnection()) {
			connection.execute("CLIENT", "PAUSE".getBytes(), Long.toString(duration.toMillis()).getBytes(),
					"ALL".getBytes());
		}
	}

	private ProviderSimulator simulator(
			java.util.function.Consumer<dev.llmquota.test.simulator.ProviderSimulatorBuilder> setup) {
		dev.llmquota.test.simulator.ProviderSimulatorBuilder builder = ProviderSimulator.builder();
		setup.accept(builder);
		ProviderSimulator simulator = builder.start();
		this.resources.add(simulator);
		return simulator;
	}

	private GovernedApp replica(ProviderSimulator simulator, EmbeddedRedis redis, String... properties) {
		List<String> all = new ArrayList<>();
		String prefix = "llm.quota.providers." + this.provider + ".";
		all.add(prefix + "base-url=" + simulator.baseUrl());
		all.add(prefix + "dialect=" + DIALECT.dialect());
		all.add("llm.quota.backend=redis");
		all.add("spring.data.redis.host=127.0.0.1");
		all.add("spring.data.redis.port=" + redis.port());
		for (String property : properties) {
			all.add(property.startsWith("llm.") ? property : prefix + property);
		}
		GovernedApp app = GovernedApp.start(all.toArray(String[]::new));
		this.resources.add(app);
		return app;
	}

	private static StoreStatus status(GovernedApp replica) {
		return replica.engine().store().status();
	}

	private static Mono<String> send(WebClient client, ProviderSimulator simulator) {
		return send(client, simulator, "Summarise this.");
	}

	private static Mono<String> send(WebClient client, ProviderSimulator simulator, String prompt) {
		return client.post()
			.uri(simulator.baseUrl() + DIALECT.path(MODEL, false))
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(DIALECT.body(MODEL, 50, false, prompt))
			.retrieve()
			.bodyToMono(String.class);
	}

	/** A streamed call, in flight as long as the provider streams. */
	private static Mono<String> streamed(WebClient client, ProviderSimulator simulator) {
		return client.post()
			.uri(simulator.baseUrl() + DIALECT.path(MODEL, true))
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(DIALECT.body(MODEL, 200, true, "Tell a long story."))
			.retrieve()
			.bodyToFlux(String.class)
			.last();
	}

	private static dev.llmquota.core.Account account(GovernedApp replica) {
		return replica.engine().accounts().iterator().next();
	}

}
