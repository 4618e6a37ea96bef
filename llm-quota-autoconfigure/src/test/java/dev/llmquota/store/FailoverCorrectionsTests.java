package dev.llmquota.store;

import java.time.Duration;

import dev.llmquota.QuotaExhaustedException;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.Calls;
import dev.llmquota.core.Demand;
import dev.llmquota.core.ManualClock;
import dev.llmquota.core.Pool;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.core.QuotaState;
import dev.llmquota.core.TestConfigs;
import dev.llmquota.core.Usage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static dev.llmquota.core.Calls.acquire;
import static dev.llmquota.core.Dimension.TOKENS_PER_MINUTE;
import static dev.llmquota.core.TestConfigs.limits;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Around a Redis outage every correction reaches the books that charged the call: a call
 * booked in the local fallback is corrected there even once Redis is back, and a call
 * booked in Redis that ends while Redis does not answer is corrected in Redis when it
 * answers again; and what this replica heard meanwhile (a spent quota, an operator's
 * reset) reaches the others when Redis is back. Redis is made unreachable with
 * {@code CLIENT PAUSE}, which keeps its data, so what it holds afterwards can be read.
 */
@Tag("slow")
class FailoverCorrectionsTests {

	private static final Duration PATIENCE = Duration.ofSeconds(15);

	private final ManualClock clock = new ManualClock();

	private EmbeddedRedis redis;

	private LettuceConnectionFactory connectionFactory;

	private RedisQuotaStore store;

	private QuotaEngine engine;

	@BeforeEach
	void start() {
		this.redis = EmbeddedRedis.own();
		this.connectionFactory = this.redis.connectionFactory();
		this.store = new RedisQuotaStore(this.connectionFactory,
				new RedisQuotaStore.Settings(RedisQuotaStore.OnFailure.LOCAL, 0.5, Duration.ofSeconds(30),
						Duration.ofMillis(200)),
				this.clock::nanoTime);
		// 600 tokens a minute in a bucket of 600: no refill while the clock stands, and
		// Redis, which expires a bucket's key once it would be full on its own clock,
		// keeps it for seconds
		this.engine = TestConfigs.provider()
			.inFlightGate(false)
			.headroom(1.0)
			.burstWindow(Duration.ofSeconds(60))
			.model("gpt-4o", limits(TOKENS_PER_MINUTE, 600))
			.engine(this.store, this.clock);
	}

	@AfterEach
	void stop() {
		this.engine.close();
		this.store.close();
		this.connectionFactory.destroy();
		this.redis.close();
	}

	@Test
	void everyCorrectionReachesTheBooksThatChargedTheCall() {
		Pool pool = this.engine.pool("openai", "gpt-4o");
		BucketSpec tokens = pool.bucket(TOKENS_PER_MINUTE);
		// booked in Redis: 100 reserved
		Calls.Call inRedis = acquire(this.engine, pool, new Demand(10, 90));
		assertThat(inRedis.admitted()).isTrue();
		pause(Duration.ofMillis(1_500));
		// booked while Redis does not answer: in the fallback, which sees the outage
		Calls.Call inFallback = acquire(this.engine, pool, new Demand(10, 90));
		assertThat(inFallback.admitted()).isTrue();
		await().atMost(PATIENCE).until(() -> !this.store.status().reachable());
		// the call booked in Redis ends during the outage: 15 used, 85 to refund there
		inRedis.permit().complete(new Usage(10, 0, 5));
		await().atMost(PATIENCE).until(() -> this.store.status().reachable());
		assertThat(redisRemaining(tokens))
			.as("Redis got the refund of its own call, and what the fallback holds (100) as it came back")
			.isEqualTo(600 - 15 - 100);
		// the call booked in the fallback ends with Redis back: its refund stays with the
		// books that booked it
		inFallback.permit().complete(new Usage(10, 0, 5));
		Calls.settle(this.engine);
		assertThat(redisRemaining(tokens)).isEqualTo(600 - 15 - 100);
	}

	@Test
	void whatTheFallbackAdmittedIsChargedToRedisWhenItAnswersAgain() {
		Pool pool = this.engine.pool("openai", "gpt-4o");
		BucketSpec tokens = pool.bucket(TOKENS_PER_MINUTE);
		pause(Duration.ofMillis(1_500));
		Calls.Call first = acquire(this.engine, pool, new Demand(100, 100));
		assertThat(first.admitted()).isTrue();
		await().atMost(PATIENCE).until(() -> !this.store.status().reachable());
		first.permit().complete(new Usage(100, 0, 20));
		// this replica's share in fallback is half the bucket: 300 of 600
		Calls.Call second = acquire(this.engine, pool, new Demand(100, 50));
		assertThat(second.admitted()).isTrue();
		second.permit().complete(new Usage(100, 0, 30));
		await().atMost(PATIENCE).until(() -> this.store.status().reachable());
		assertThat(redisRemaining(tokens)).as("Redis, which kept its books, saw nothing of the 250 used meanwhile")
			.isEqualTo(600 - 120 - 130);
	}

	/**
	 * A spent quota heard while Redis does not answer holds this replica's calls, and
	 * still holds every replica's once Redis answers again: sent then, it was lost, and
	 * the first call booked in Redis cleared it here too (a certain refusal, ten days
	 * early).
	 */
	@Test
	void aSpentQuotaHeardWhileRedisIsDownStillHoldsOnceItIsBack() {
		Pool pool = this.engine.pool("openai", "gpt-4o");
		goDown();
		this.engine.exhaust(pool, true, null, "insufficient_quota", this.clock.instant().plus(Duration.ofDays(10)));
		Calls.Call during = acquire(this.engine, pool, new Demand(10, 10));
		await().atMost(PATIENCE).until(() -> during.error() != null);
		assertThat(during.error()).as("in the fallback").isInstanceOf(QuotaExhaustedException.class);
		await().atMost(PATIENCE).until(() -> this.store.status().reachable());
		Calls.Call after = acquire(this.engine, pool, new Demand(10, 10));
		await().atMost(PATIENCE).until(() -> after.admitted() || after.error() != null);
		assertThat(after.error()).as("with Redis back").isInstanceOf(QuotaExhaustedException.class);
	}

	/**
	 * An operator's reset of a spent quota made while Redis does not answer stands once
	 * it answers again, for every replica; it was lost, and Redis's spent quota came
	 * back.
	 */
	@Test
	void anOperatorsResetMadeWhileRedisIsDownStandsOnceItIsBack() {
		Pool pool = this.engine.pool("openai", "gpt-4o");
		this.engine.exhaust(pool, true, null, "insufficient_quota", this.clock.instant().plus(Duration.ofDays(10)));
		await().atMost(PATIENCE).until(() -> this.engine.state(pool) == QuotaState.EXHAUSTED);
		goDown();
		assertThat(this.engine.resetExhausted("openai", null)).isTrue();
		Calls.Call during = acquire(this.engine, pool, new Demand(10, 10));
		await().atMost(PATIENCE).until(() -> during.admitted() || during.error() != null);
		assertThat(during.admitted()).as("in the fallback").isTrue();
		during.permit().complete(null);
		await().atMost(PATIENCE).until(() -> this.store.status().reachable());
		Calls.Call after = acquire(this.engine, pool, new Demand(10, 10));
		await().atMost(PATIENCE).until(() -> after.admitted() || after.error() != null);
		assertThat(after.error()).as("with Redis back").isNull();
	}

	/**
	 * A spent quota heard in an outage whose probe, in the same outage, finds it back:
	 * Redis is not told it is spent when it answers again (every replica would fail fast
	 * until Redis's own probe, minutes later).
	 */
	@Test
	void aSpentQuotaAProbeFoundBackInTheOutageIsNotSpentOnceRedisIsBack() {
		Pool pool = this.engine.pool("openai", "gpt-4o");
		goDown();
		this.engine.exhaust(pool, false, null, "insufficient_quota", null);
		this.clock.advance(Duration.ofMinutes(5));
		Calls.Call probe = acquire(this.engine, pool, new Demand(10, 10));
		await().atMost(PATIENCE).until(() -> probe.admitted() || probe.error() != null);
		assertThat(probe.admitted()).as("the probe, in the fallback").isTrue();
		// answered: the quota is back
		this.engine.succeeded(probe.permit());
		probe.permit().complete(new Usage(10, 0, 10));
		Calls.settle(this.engine);
		assertThat(this.engine.state(pool)).as("this replica, the probe answered").isEqualTo(QuotaState.OK);
		await().atMost(PATIENCE).until(() -> this.store.status().reachable());
		Calls.Call after = acquire(this.engine, pool, new Demand(10, 10));
		await().atMost(PATIENCE).until(() -> after.admitted() || after.error() != null);
		assertThat(after.error()).as("with Redis back").isNull();
	}

	/**
	 * A call booked in the fallback that ends once Redis is back used more than it
	 * reserved: Redis, which was handed its reservation, is charged the rest too, as
	 * every replica admits on those books; its refunds stay with the fallback's.
	 */
	@Test
	void usageAboveTheReservationOfAFallbackCallEndingOnceRedisIsBackReachesRedis() {
		Pool pool = this.engine.pool("openai", "gpt-4o");
		BucketSpec tokens = pool.bucket(TOKENS_PER_MINUTE);
		pause(Duration.ofMillis(1_500));
		// booked in the fallback: 100 reserved
		Calls.Call running = acquire(this.engine, pool, new Demand(10, 90));
		assertThat(running.admitted()).isTrue();
		await().atMost(PATIENCE).until(() -> !this.store.status().reachable());
		await().atMost(PATIENCE).until(() -> this.store.status().reachable());
		assertThat(redisRemaining(tokens)).as("the reservation, handed over").isEqualTo(600 - 100);
		// the prompt was 300 tokens, not the 10 estimated: 390 used, 290 above the
		// reservation
		running.permit().complete(new Usage(300, 0, 90));
		Calls.settle(this.engine);
		assertThat(redisRemaining(tokens)).as("the shared books, once the call ended").isEqualTo(600 - 390);
	}

	/** Makes Redis unreachable for two seconds, and waits until this replica sees it. */
	private void goDown() {
		pause(Duration.ofMillis(2_000));
		Pool pool = this.engine.pool("openai", "gpt-4o");
		await().atMost(PATIENCE).until(() -> {
			this.engine.state(pool);
			return !this.store.status().reachable();
		});
	}

	private void pause(Duration duration) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			connection.execute("CLIENT", "PAUSE".getBytes(), Long.toString(duration.toMillis()).getBytes(),
					"ALL".getBytes());
		}
	}

	private long redisRemaining(BucketSpec bucket) {
		return this.store.state(bucket, this.clock.nanoTime(), this.clock.instant()).remaining();
	}

}
