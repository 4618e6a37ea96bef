package dev.llmquota.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import dev.llmquota.BudgetExhaustedException;
import dev.llmquota.QuotaExhaustedException;
import dev.llmquota.QuotaWaitTimeoutException;
import dev.llmquota.actuate.QuotaReports;
import dev.llmquota.core.Accounting;
import dev.llmquota.core.Calls;
import dev.llmquota.core.Cost;
import dev.llmquota.core.Demand;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.ManualClock;
import dev.llmquota.core.Pool;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.core.QuotaState;
import dev.llmquota.core.ServerLimit;
import dev.llmquota.core.TestConfigs;
import dev.llmquota.core.Usage;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static dev.llmquota.core.Calls.acquire;
import static dev.llmquota.core.Dimension.BUDGET_PER_DAY;
import static dev.llmquota.core.Dimension.CONCURRENT_REQUESTS;
import static dev.llmquota.core.Dimension.REQUESTS_PER_MINUTE;
import static dev.llmquota.core.Dimension.TOKENS_PER_DAY;
import static dev.llmquota.core.Dimension.TOKENS_PER_MINUTE;
import static dev.llmquota.core.TestConfigs.limits;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Engines sharing one Redis store, as replicas do, on one clock the test moves: calls are
 * booked once and wait out their start locally, in the order Redis booked them across
 * replicas; what one replica hears from the provider holds the others.
 */
class SharedEngineTests {

	private static final Duration PATIENCE = Duration.ofSeconds(10);

	private static LettuceConnectionFactory connectionFactory;

	private final ManualClock clock = new ManualClock();

	private final List<AutoCloseable> resources = new ArrayList<>();

	@BeforeAll
	static void connect() {
		connectionFactory = EmbeddedRedis.shared().connectionFactory();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@BeforeEach
	void emptyTheBooks() {
		try (RedisConnection connection = connectionFactory.getConnection()) {
			connection.serverCommands().flushAll();
		}
	}

	@AfterEach
	void close() throws Exception {
		for (AutoCloseable resource : this.resources) {
			resource.close();
		}
	}

	/**
	 * One request per second and a bucket of one: each call after the first is booked a
	 * second after the one before. No in-flight bound, so calls are booked as they come.
	 */
	private QuotaEngine replica() {
		return replica(TestConfigs.provider()
			.inFlightGate(false)
			.burstWindow(Duration.ofSeconds(1))
			.model("gpt-4o", limits(REQUESTS_PER_MINUTE, 60)));
	}

	private QuotaEngine replica(TestConfigs config) {
		return replica(config, this.clock);
	}

	private QuotaEngine replica(TestConfigs config, ManualClock clock) {
		RedisQuotaStore store = new RedisQuotaStore(connectionFactory, new RedisQuotaStore.Settings(
				RedisQuotaStore.OnFailure.REJECT, 0.5, Duration.ofSeconds(30), Duration.ofSeconds(2)), clock::nanoTime);
		QuotaEngine engine = config.engine(store, clock);
		this.resources.add(engine);
		this.resources.add(store);
		return engine;
	}

	private static Pool pool(QuotaEngine engine) {
		return engine.pool("openai", "gpt-4o");
	}

	private static Calls.Call call(QuotaEngine engine) {
		return acquire(engine, pool(engine), new Demand(100, 100));
	}

	private static void awaitBooked(QuotaEngine engine) {
		Calls.settle(engine);
	}

	@Test
	void aRedisThatComesBackEmptyDoesNotGiveTheReplicasASecondFullWindow() {
		QuotaEngine engine = replica(TestConfigs.provider()
			.inFlightGate(false)
			.burstWindow(Duration.ofSeconds(10))
			.model("gpt-4o", limits(REQUESTS_PER_MINUTE, 60)));
		for (int i = 0; i < 10; i++) {
			Calls.Call call = call(engine);
			await().atMost(PATIENCE).until(call::admitted);
			call.permit().complete(null);
		}
		// restarted without persistence: every key is gone
		emptyTheBooks();
		Calls.Call afterRestart = call(engine);
		awaitBooked(engine);
		assertThat(afterRestart.admitted()).as("the window was spent a moment ago").isFalse();
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(afterRestart.admitted()).as("one request a second from the loss").isTrue();
	}

	@Test
	void aCallBookedAheadWaitsOutItsStartHereAfterOneRoundTrip() {
		QuotaEngine engine = replica();
		Calls.Call first = call(engine);
		await().atMost(PATIENCE).until(first::admitted);
		// counted from here: a second call racing the first's booking could add a look
		long before = scriptCalls();
		Calls.Call second = call(engine);
		awaitBooked(engine);
		assertThat(second.admitted()).isFalse();
		this.clock.advance(Duration.ofMillis(999));
		assertThat(second.admitted()).isFalse();
		this.clock.advance(Duration.ofMillis(1));
		assertThat(second.admitted()).isTrue();
		assertThat(second.waited()).isEqualTo(Duration.ofSeconds(1));
		assertThat(scriptCalls() - before).as("round trips for the call booked ahead").isEqualTo(1);
	}

	@Test
	void aCallBookedBeforeMidnightAndRefundedAfterItRefundsTheDayThatWasCharged() {
		ManualClock late = new ManualClock(java.time.Instant.parse("2026-11-30T23:59:59.500Z"));
		QuotaEngine engine = replica(TestConfigs.provider()
			.inFlightGate(false)
			.burstWindow(Duration.ofSeconds(1))
			.model("gpt-4o", limits(REQUESTS_PER_MINUTE, 60, TOKENS_PER_DAY, 10_000)), late);
		await().atMost(PATIENCE).until(call(engine)::admitted);
		// booked at 23:59:59.5, charged to the 30th, starting in the next day
		Calls.Call bookedAhead = call(engine);
		awaitBooked(engine);
		late.advance(Duration.ofSeconds(1));
		assertThat(bookedAhead.admitted()).isTrue();
		late.advance(Duration.ofSeconds(1));
		Calls.Call nextDay = call(engine);
		await().atMost(PATIENCE).until(nextDay::admitted);
		// 90 of its 100 output tokens unused: the 30th charged them, the 1st did not
		bookedAhead.permit().complete(new Usage(100, 0, 10));
		nextDay.permit().complete(new Usage(100, 0, 100));
		await().atMost(PATIENCE)
			.untilAsserted(() -> assertThat(remaining(engine, TOKENS_PER_DAY, late)).isEqualTo(10_000 - 200));
	}

	/**
	 * One replica hears that a quota is spent, back in an hour; another, whose wall clock
	 * is an hour behind, hears it from Redis: the hour is a wait, so its calls go again
	 * once it has passed, whatever its wall clock reads.
	 */
	@Test
	void aSpentQuotaHeardFromRedisEndsWhenItsWaitHasPassedOnAReplicaWhoseWallClockIsBehind() {
		QuotaEngine heard = replica();
		ManualClock behind = new ManualClock(this.clock.instant().minus(Duration.ofHours(1)), this.clock.nanoTime());
		QuotaEngine other = replica(TestConfigs.provider()
			.inFlightGate(false)
			.burstWindow(Duration.ofSeconds(1))
			.model("gpt-4o", limits(REQUESTS_PER_MINUTE, 60)), behind);
		heard.exhaust(pool(heard), false, null, "retry after 3600 seconds",
				this.clock.instant().plus(Duration.ofHours(1)));
		Calls.Call refused = call(other);
		await().atMost(PATIENCE).until(() -> refused.error() != null);
		assertThat(refused.error()).isInstanceOf(QuotaExhaustedException.class);
		this.clock.advance(Duration.ofMinutes(61));
		behind.advance(Duration.ofMinutes(61));
		Calls.Call after = call(other);
		await().atMost(PATIENCE).until(() -> after.admitted() || after.error() != null);
		assertThat(after.error()).as("the provider's hour has passed").isNull();
	}

	private static long remaining(QuotaEngine engine, dev.llmquota.core.Dimension dimension, ManualClock clock) {
		return engine.snapshot(pool(engine)).bucket(dev.llmquota.core.BucketSpec.Scope.POOL, dimension).remaining();
	}

	@Test
	void outputChargedAsGeneratedIsHeldBackByItsExpectedOutputOnTheSharedStoreToo() {
		// 6,000 output tokens a minute at 10 s a call: 1,000 in flight, calls of 600
		QuotaEngine engine = replica(TestConfigs.provider()
			.headroom(1.0)
			.burstWindow(Duration.ofSeconds(60))
			.expectedLatency(Duration.ofSeconds(10))
			.accounting(new Accounting(false, true, false, 1))
			.model("gpt-4o", limits(dev.llmquota.core.Dimension.OUTPUT_TOKENS_PER_MINUTE, 6_000)));
		Calls.Call first = call(engine, new Demand(100, 600));
		await().atMost(PATIENCE).until(first::admitted);
		Calls.Call second = call(engine, new Demand(100, 600));
		assertThat(engine.waiting(pool(engine).account())).isEqualTo(1);
		this.clock.advance(Duration.ofSeconds(10));
		first.permit().complete(new Usage(100, 0, 200));
		await().atMost(PATIENCE).until(second::admitted);
	}

	private static Calls.Call call(QuotaEngine engine, Demand demand) {
		return acquire(engine, pool(engine), demand);
	}

	@Test
	void aCallCancelledBeforeItsStartGivesItsBookingBack() {
		QuotaEngine engine = replica();
		await().atMost(PATIENCE).until(call(engine)::admitted);
		Calls.Call cancelled = call(engine);
		awaitBooked(engine);
		cancelled.cancel();
		Calls.Call next = call(engine);
		awaitBooked(engine);
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(next.admitted()).as("takes the second the cancelled call gave back").isTrue();
		assertThat(cancelled.admitted()).isFalse();
	}

	@Test
	void replicasSharingABucketAreAdmittedInTheOrderRedisBookedThem() {
		QuotaEngine one = replica();
		QuotaEngine two = replica();
		await().atMost(PATIENCE).until(call(one)::admitted);
		Calls.Call second = call(two);
		awaitBooked(two);
		Calls.Call third = call(one);
		awaitBooked(one);
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(second.admitted()).isTrue();
		assertThat(third.admitted()).isFalse();
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(third.admitted()).isTrue();
	}

	@Test
	void aRateLimitHeardByOneReplicaHoldsEveryReplicaUntilItsEnd() {
		QuotaEngine one = replica();
		QuotaEngine two = replica();
		one.rateLimited(pool(one), REQUESTS_PER_MINUTE, Duration.ofSeconds(5));
		await().atMost(PATIENCE).until(() -> holds(pool(one).sanctionsKey(), "p:requests-per-minute"));
		Calls.Call held = call(two);
		awaitBooked(two);
		this.clock.advance(Duration.ofMillis(4_999));
		assertThat(held.admitted()).as("still held").isFalse();
		this.clock.advance(Duration.ofMillis(1));
		assertThat(held.admitted()).isTrue();
	}

	@Test
	void aCallThatCannotOutwaitAPenaltyTimesOutNamingIt() {
		QuotaEngine one = replica();
		QuotaEngine two = replica();
		one.rateLimited(pool(one), REQUESTS_PER_MINUTE, Duration.ofSeconds(60));
		await().atMost(PATIENCE).until(() -> holds(pool(one).sanctionsKey(), "p:requests-per-minute"));
		Calls.Call held = acquire(two, pool(two), new Demand(100, 100), null, Duration.ofSeconds(2));
		await().atMost(PATIENCE).until(() -> two.state(pool(two)) == QuotaState.THROTTLED);
		this.clock.advance(Duration.ofSeconds(2));
		await().atMost(PATIENCE).until(() -> held.error() != null);
		assertThat(held.error()).isInstanceOf(QuotaWaitTimeoutException.class)
			.extracting((ex) -> ((QuotaWaitTimeoutException) ex).getDimension())
			.isEqualTo(REQUESTS_PER_MINUTE.id());
	}

	@Test
	void aSpentQuotaHeardByOneReplicaFailsEveryReplicaFastUntilAnOperatorResetsIt() {
		QuotaEngine one = replica();
		QuotaEngine two = replica();
		one.exhaust(pool(one), true, null, "insufficient_quota", null);
		String hold = pool(one).account().sanctionsKey();
		await().atMost(PATIENCE).until(() -> holds(hold, "xr"));
		Calls.Call refused = call(two);
		await().atMost(PATIENCE).until(() -> refused.error() != null);
		assertThat(refused.error()).isInstanceOf(QuotaExhaustedException.class);
		assertThat(two.state(pool(two))).isEqualTo(QuotaState.EXHAUSTED);
		one.resetExhausted("openai", null);
		await().atMost(PATIENCE).until(() -> !holds(hold, "xr"));
		Calls.Call admitted = call(two);
		await().atMost(PATIENCE).until(admitted::admitted);
		assertThat(two.state(pool(two))).isEqualTo(QuotaState.OK);
	}

	@Test
	void sharedInFlightSlotsCountTheCallsOfEveryReplica() {
		TestConfigs config = TestConfigs.provider().model("gpt-4o", limits(CONCURRENT_REQUESTS, 1));
		QuotaEngine one = replica(config);
		QuotaEngine two = replica(config);
		Calls.Call first = call(one);
		await().atMost(PATIENCE).until(first::admitted);
		long before = scriptCalls();
		Calls.Call second = call(two);
		await().atMost(PATIENCE).until(() -> scriptCalls() > before);
		this.clock.advance(Duration.ofMillis(500));
		assertThat(second.admitted()).as("the other replica's call holds the slot").isFalse();
		assertThat(leases(pool(one).slots().get(0).key())).isOne();
		first.permit().complete(null);
		// The slot was freed by another replica, unseen here: the waiting replica looks
		// again every eighth of the call latency (175 ms here).
		await().atMost(PATIENCE).until(() -> {
			this.clock.advance(Duration.ofMillis(50));
			return second.admitted();
		});
	}

	@Test
	void theFirstCallToWaitForASharedSlotIsTheFirstAdmittedOnAnyReplica() {
		TestConfigs config = TestConfigs.provider().model("gpt-4o", limits(CONCURRENT_REQUESTS, 1));
		QuotaEngine one = replica(config);
		QuotaEngine two = replica(config);
		Calls.Call running = call(one);
		await().atMost(PATIENCE).until(running::admitted);
		long before = scriptCalls();
		Calls.Call firstToWait = call(two);
		await().atMost(PATIENCE).until(() -> scriptCalls() > before);
		awaitBooked(two);
		long beforeSecond = scriptCalls();
		Calls.Call secondToWait = call(one);
		await().atMost(PATIENCE).until(() -> scriptCalls() > beforeSecond);
		awaitBooked(one);
		// the replica that holds the slot frees it: its own waiter asks at once, but the
		// call on the other replica waited first
		running.permit().complete(null);
		awaitBooked(one);
		assertThat(secondToWait.admitted()).as("it may not jump the line").isFalse();
		await().atMost(PATIENCE).until(() -> {
			this.clock.advance(Duration.ofMillis(50));
			return firstToWait.admitted();
		});
		assertThat(secondToWait.admitted()).isFalse();
		firstToWait.permit().complete(null);
		await().atMost(PATIENCE).until(() -> {
			this.clock.advance(Duration.ofMillis(50));
			return secondToWait.admitted();
		});
	}

	@Test
	void aLimitRaisedThroughOneReplicaAppliesToEveryReplicaAndToReplicasStartedLater() {
		QuotaEngine one = replica();
		QuotaEngine two = replica();
		one.changeLimit("openai", "gpt-4o", REQUESTS_PER_MINUTE, 120);
		one.changeLimit("openai", null, REQUESTS_PER_MINUTE, 1_000);
		await().atMost(PATIENCE)
			.until(() -> Long.valueOf(120).equals(pool(two).limits().asMap().get(REQUESTS_PER_MINUTE))
					// the account has no such limit until the change lands
					&& Long.valueOf(1_000).equals(pool(two).account().limits().asMap().get(REQUESTS_PER_MINUTE)));
		QuotaEngine later = replica();
		await().atMost(PATIENCE)
			.until(() -> Long.valueOf(120).equals(pool(later).limits().asMap().get(REQUESTS_PER_MINUTE)));
	}

	/**
	 * A spent quota or a penalty one replica heard holds every replica's calls through
	 * the shared books: every replica's endpoint and health show it, not only the one
	 * that heard it.
	 */
	@Test
	void aHoldOneReplicaHeardShowsOnEveryReplica() {
		QuotaEngine one = replica();
		QuotaEngine two = replica();
		assertThat(two.state(pool(two))).isEqualTo(QuotaState.OK);
		one.penalize(pool(one), Dimension.TOKENS_PER_MINUTE, Duration.ofSeconds(20));
		await().atMost(PATIENCE).until(() -> two.state(pool(two)) == QuotaState.THROTTLED);
		one.exhaust(pool(one), true, null, "insufficient_quota", null);
		await().atMost(PATIENCE).until(() -> two.state(pool(two)) == QuotaState.EXHAUSTED);
		assertThat(two.state(pool(two).account())).isEqualTo(QuotaState.EXHAUSTED);
		one.resetExhausted("openai", null);
		await().atMost(PATIENCE).until(() -> two.state(pool(two)) == QuotaState.THROTTLED);
		this.clock.advance(Duration.ofSeconds(21));
		await().atMost(PATIENCE).until(() -> two.state(pool(two)) == QuotaState.OK);
	}

	/**
	 * A provider's penalty on requests-per-minute, heard by one replica, holds every
	 * replica's calls: every replica's endpoint names it as what binds, not only the one
	 * that heard it.
	 */
	@Test
	void aPenaltyOneReplicaHeardBindsOnEveryReplicasEndpoint() {
		QuotaEngine one = replica(tokensAndRequests());
		QuotaEngine two = replica(tokensAndRequests());
		Calls.Call call = acquire(two, pool(two), new Demand(1_000, 200));
		await().atMost(PATIENCE).until(call::admitted);
		call.permit().complete(new Usage(1_000, 0, 200));
		assertThat(new QuotaReports(two).report(null).pools().get(0).binding()).isEqualTo("tokens-per-minute");
		one.rateLimited(pool(one), REQUESTS_PER_MINUTE, Duration.ofSeconds(30));
		await().atMost(PATIENCE).until(() -> two.state(pool(two)) == QuotaState.THROTTLED);
		assertThat(new QuotaReports(two).report(null).pools().get(0).binding()).isEqualTo("requests-per-minute");
	}

	private static TestConfigs tokensAndRequests() {
		return TestConfigs.provider()
			.inFlightGate(false)
			.model("gpt-4o", limits(REQUESTS_PER_MINUTE, 500, TOKENS_PER_MINUTE, 30_000));
	}

	/**
	 * What a route weighs on the caller's thread, for every target, asks Redis nothing:
	 * only the endpoint and health read the shared holds. The store's own ticker (its
	 * heartbeat, at least once a second in real time) may land in the window: a few
	 * scripts, where asking Redis would be one a headroom at least.
	 */
	@Test
	void headroomAsksRedisNothing() {
		QuotaEngine engine = replica();
		Pool pool = pool(engine);
		engine.headroom(pool, new Demand(100, 100), null);
		long before = scriptCalls();
		for (int i = 0; i < 100; i++) {
			engine.headroom(pool, new Demand(100, 100), null);
		}
		assertThat(scriptCalls() - before).as("scripts Redis ran for 100 headrooms").isLessThan(10);
	}

	/**
	 * A model named in another case is the same pool: its limit is published under the
	 * pool's own id, so the last change wins on a replica started later, whatever case
	 * the operator wrote.
	 */
	@Test
	void theLastLimitChangeWinsOnALaterReplicaWhateverCaseTheModelWasNamedIn() {
		QuotaEngine one = replica();
		one.changeLimit("openai", "gpt-4o", REQUESTS_PER_MINUTE, 120);
		one.changeLimit("openai", "GPT-4O", REQUESTS_PER_MINUTE, 240);
		one.changeLimit("openai", "gpt-4o", REQUESTS_PER_MINUTE, 360);
		assertThat(pool(one).limits().asMap()).containsEntry(REQUESTS_PER_MINUTE, 360L);
		QuotaEngine later = replica();
		await().atMost(PATIENCE)
			.until(() -> Long.valueOf(360).equals(pool(later).limits().asMap().get(REQUESTS_PER_MINUTE)));
		// every published change has landed by now: none moves it after
		QuotaEngine last = replica();
		await().atMost(PATIENCE)
			.until(() -> Long.valueOf(360).equals(pool(last).limits().asMap().get(REQUESTS_PER_MINUTE)));
		assertThat(pool(later).limits().asMap()).containsEntry(REQUESTS_PER_MINUTE, 360L);
	}

	/**
	 * An operator's limit published by one replica pins it on another, even where that
	 * one had learned the same value from the provider's headers: a later report does not
	 * override it there.
	 */
	@Test
	void anOperatorsLimitEqualToOneAnotherReplicaLearnedStillPinsItThere() {
		QuotaEngine one = replica();
		QuotaEngine two = replica();
		two.observe(pool(two), List.of(new ServerLimit(TOKENS_PER_MINUTE, 30_000L, null, null)));
		assertThat(pool(two).learned(TOKENS_PER_MINUTE)).isTrue();
		one.changeLimit("openai", "gpt-4o", TOKENS_PER_MINUTE, 30_000);
		await().atMost(PATIENCE).until(() -> !pool(two).learned(TOKENS_PER_MINUTE));
		two.observe(pool(two), List.of(new ServerLimit(TOKENS_PER_MINUTE, 60_000L, null, null)));
		assertThat(pool(two).limits().asMap()).containsEntry(TOKENS_PER_MINUTE, 30_000L);
	}

	@Test
	void aSpentBudgetStaysSpentWhenAReplicaRestarts() {
		// 40 millionths a token: a call of 1,000 tokens in and out reserves and costs
		// 0.08
		TestConfigs config = TestConfigs.provider()
			.inFlightGate(false)
			.accounting(new Accounting(true, true, true, 1, new Cost(40, 40, 40)))
			.account(limits(BUDGET_PER_DAY, 200_000))
			.model("gpt-4o", limits());
		QuotaEngine before = replica(config);
		for (int i = 0; i < 2; i++) {
			Calls.Call call = call(before);
			await().atMost(PATIENCE).until(call::admitted);
			call.permit().complete(new Usage(1_000, 0, 1_000));
		}
		Calls.Call third = acquire(before, pool(before), new Demand(1_000, 1_000));
		await().atMost(PATIENCE).until(() -> third.error() != null);
		assertThat(third.error()).isInstanceOf(BudgetExhaustedException.class);
		before.close();
		QuotaEngine after = replica(config);
		Calls.Call afterRestart = acquire(after, pool(after), new Demand(1_000, 1_000));
		await().atMost(PATIENCE).until(() -> afterRestart.error() != null);
		assertThat(afterRestart.error()).isInstanceOf(BudgetExhaustedException.class);
	}

	/** How many times the script ran on the server. */
	private static long scriptCalls() {
		try (RedisConnection connection = connectionFactory.getConnection()) {
			Properties stats = connection.serverCommands().info("commandstats");
			long calls = 0;
			for (String command : List.of("cmdstat_evalsha", "cmdstat_eval")) {
				String line = stats.getProperty(command);
				if (line != null) {
					// calls=N,usec=...,failed_calls=...
					calls += Long.parseLong(line.substring("calls=".length(), line.indexOf(',')));
				}
			}
			return calls;
		}
	}

	private static boolean holds(String key, String field) {
		try (RedisConnection connection = connectionFactory.getConnection()) {
			return Boolean.TRUE.equals(connection.hashCommands().hExists(key.getBytes(), field.getBytes()));
		}
	}

	private static long leases(String key) {
		try (RedisConnection connection = connectionFactory.getConnection()) {
			Long count = connection.zSetCommands().zCard(key.getBytes());
			return (count != null) ? count : 0;
		}
	}

}
