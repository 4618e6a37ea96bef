package dev.llmquota.store;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import dev.llmquota.core.Booking;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.Charge;
import dev.llmquota.core.BookingRequest;
import dev.llmquota.core.Dimension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A booking whose answer is late has an unknown outcome, not a failed one: the call waits
 * for it while Redis still answers, goes to the local books only once Redis is judged
 * down, and a booking that lands after the call stopped waiting is given back. So a call
 * is never admitted both in Redis and locally. Redis is made late with
 * {@code CLIENT PAUSE}, which delays every answer, pings included, and keeps the data.
 */
@Tag("slow")
class LateOrDownRedisTests {

	private static final Duration PATIENCE = Duration.ofSeconds(15);

	private static final long NOW = 1_000_000_000L;

	private static final Instant WALL = Instant.parse("2026-12-01T12:00:00Z");

	private final List<AutoCloseable> resources = new ArrayList<>();

	private EmbeddedRedis redis;

	private LettuceConnectionFactory connectionFactory;

	/** 600 a minute: a booking of 300 takes 30 s to refill, and its key lives as long. */
	private final BucketSpec tokens = new BucketSpec("llmq:{late}:tokens", BucketSpec.Scope.POOL,
			Dimension.TOKENS_PER_MINUTE, 600, 600, java.time.ZoneOffset.UTC);

	private final BucketSpec slot = new BucketSpec("llmq:{late}:slots", BucketSpec.Scope.POOL,
			Dimension.CONCURRENT_REQUESTS, 1, 1, java.time.ZoneOffset.UTC);

	private final BookingRequest request = new BookingRequest(List.of(new Charge(this.tokens, 300)), List.of(this.slot),
			List.of(), null);

	@BeforeEach
	void start() {
		this.redis = EmbeddedRedis.own();
		this.connectionFactory = this.redis.connectionFactory();
	}

	@AfterEach
	void stop() throws Exception {
		for (AutoCloseable resource : this.resources) {
			resource.close();
		}
		this.connectionFactory.destroy();
		this.redis.close();
	}

	@Test
	void anAnswerLaterThanTheTimeoutFromARedisThatStillAnswersIsWaitedFor() {
		// an answer is late after 2 s; the ping that follows gets 1 s more
		RedisQuotaStore one = store(Duration.ofSeconds(1));
		RedisQuotaStore two = store(Duration.ofSeconds(1));
		pause(Duration.ofMillis(2_500));
		Booking booking = one.book(this.request, NOW, WALL, NOW + Duration.ofSeconds(30).toNanos());
		assertThat(booking).isInstanceOf(Booking.Booked.class);
		assertThat(((Booking.Booked) booking).fallback()).as("booked in Redis, not in the local books").isFalse();
		assertThat(one.status().fallbacks()).as("a late answer is not an outage").isZero();
		assertThat(two.book(this.request, NOW, WALL, NOW))
			.as("the one shared slot is taken: no second call in flight on another replica")
			.isInstanceOf(Booking.Refused.class);
	}

	@Test
	void aBookingRedisAnswersAfterTheCallWentToTheLocalBooksIsGivenBack() {
		// late after 400 ms, judged down 200 ms later, answers after 1.5 s
		RedisQuotaStore store = store(Duration.ofMillis(200));
		pause(Duration.ofMillis(1_500));
		Booking booking = store.book(this.request, NOW, WALL, NOW + Duration.ofSeconds(30).toNanos());
		assertThat(booking).isInstanceOf(Booking.Booked.class);
		assertThat(((Booking.Booked) booking).fallback()).as("Redis judged down: the local books").isTrue();
		await().atMost(PATIENCE).until(() -> store.status().reachable());
		RedisQuotaStore other = store(Duration.ofSeconds(2));
		await().atMost(PATIENCE)
			.untilAsserted(() -> assertThat(other.state(this.tokens, NOW, WALL).remaining())
				.as("the booking Redis made after the call stopped waiting is refunded there; the call, booked"
						+ " in the fallback, is handed over to Redis once it answers: charged once, not twice")
				.isEqualTo(600 - 300));
		assertThat(other.book(this.request, NOW, WALL, NOW)).as("and its slot is free")
			.isInstanceOf(Booking.Booked.class);
	}

	/**
	 * A call booked in Redis that ends while Redis is down gives its slot back once Redis
	 * answers again, not when its lease runs out (30 s here): the local store frees it at
	 * once.
	 */
	@Test
	void aSlotGivenBackWhileRedisIsDownIsFreeOnceItAnswersAgain() {
		RedisQuotaStore store = store(Duration.ofMillis(200));
		Booking booking = store.book(this.request, NOW, WALL, NOW);
		assertThat(booking).isInstanceOfSatisfying(Booking.Booked.class,
				(booked) -> assertThat(booked.fallback()).isFalse());
		pause(Duration.ofMillis(1_500));
		BookingRequest probe = new BookingRequest(List.of(new Charge(this.tokens, 1)), List.of(), List.of(), null);
		store.book(probe, NOW, WALL, NOW);
		assertThat(store.status().reachable()).as("judged down").isFalse();
		store.release(((Booking.Booked) booking).lease());
		await().atMost(PATIENCE).until(() -> store.status().reachable());
		RedisQuotaStore other = store(Duration.ofSeconds(2));
		BookingRequest slotOnly = new BookingRequest(List.of(), List.of(this.slot), List.of(), null);
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(other.book(slotOnly, NOW, WALL, NOW)).as("the slot is free")
				.isInstanceOf(Booking.Booked.class));
	}

	@Test
	void theLocalBooksStartFromWhatRedisLastSaidNotFull() {
		// one replica, taking the whole limit in fallback
		RedisQuotaStore store = store(Duration.ofMillis(200), 1.0);
		BookingRequest most = new BookingRequest(List.of(new Charge(this.tokens, 500)), List.of(), List.of(), null);
		assertThat(store.book(most, NOW, WALL, NOW)).isInstanceOf(Booking.Booked.class);
		pause(Duration.ofMillis(1_500));
		BookingRequest more = new BookingRequest(List.of(new Charge(this.tokens, 300)), List.of(), List.of(), null);
		Booking booking = store.book(more, NOW, WALL, NOW);
		assertThat(store.status().reachable()).as("judged down").isFalse();
		assertThat(booking).as("100 of 600 were left in Redis: 300 more do not fit in the local books either")
			.isInstanceOfSatisfying(Booking.Refused.class,
					(refused) -> assertThat(refused.bucket().key()).isEqualTo(this.tokens.key()));
		BookingRequest little = new BookingRequest(List.of(new Charge(this.tokens, 100)), List.of(), List.of(), null);
		assertThat(store.book(little, NOW, WALL, NOW)).as("what was left still fits")
			.isInstanceOfSatisfying(Booking.Booked.class, (booked) -> assertThat(booked.fallback()).isTrue());
	}

	@Test
	void theLocalBooksStartFromTheDaysCountRedisLastSaidNotUnused() {
		BucketSpec day = new BucketSpec("llmq:{late}:requests-per-day", BucketSpec.Scope.ACCOUNT,
				Dimension.REQUESTS_PER_DAY, 10, 10, java.time.ZoneOffset.UTC);
		RedisQuotaStore store = store(Duration.ofMillis(200));
		BookingRequest eight = new BookingRequest(List.of(new Charge(day, 8)), List.of(), List.of(), null);
		assertThat(store.book(eight, NOW, WALL, NOW)).isInstanceOf(Booking.Booked.class);
		pause(Duration.ofMillis(1_500));
		BookingRequest one = new BookingRequest(List.of(new Charge(day, 1)), List.of(), List.of(), null);
		assertThat(store.book(one, NOW, WALL, NOW)).as("half of the 2 left today: one more call")
			.isInstanceOfSatisfying(Booking.Booked.class, (booked) -> assertThat(booked.fallback()).isTrue());
		assertThat(store.status().reachable()).as("judged down").isFalse();
		assertThat(store.book(one, NOW, WALL, NOW)).as("the day's count Redis had, not a fresh day")
			.isInstanceOf(Booking.Refused.class);
	}

	/**
	 * Calls counted in the local books on both sides of midnight while Redis is down:
	 * once it answers, the new day's count takes the new day's calls only, not the ended
	 * day's too (over-counted, the day would refuse calls it has room for).
	 */
	@Test
	void theLocalBooksHandOverOnlyTheDayNowCounting() {
		BucketSpec day = new BucketSpec("llmq:{late}:requests-per-day", BucketSpec.Scope.ACCOUNT,
				Dimension.REQUESTS_PER_DAY, 10, 10, java.time.ZoneOffset.UTC);
		RedisQuotaStore store = store(Duration.ofMillis(200), 1.0);
		Instant lateOnDay = Instant.parse("2026-12-01T23:59:50Z");
		Instant nextDay = lateOnDay.plusSeconds(20);
		BookingRequest one = new BookingRequest(List.of(new Charge(day, 1)), List.of(), List.of(), null);
		pause(Duration.ofMillis(1_500));
		assertThat(store.book(one, NOW, lateOnDay, NOW)).isInstanceOfSatisfying(Booking.Booked.class,
				(booked) -> assertThat(booked.fallback()).isTrue());
		assertThat(store.book(one, NOW, nextDay, NOW)).isInstanceOfSatisfying(Booking.Booked.class,
				(booked) -> assertThat(booked.fallback()).isTrue());
		await().atMost(PATIENCE).until(() -> store.status().reachable());
		RedisQuotaStore other = store(Duration.ofSeconds(2));
		await().atMost(PATIENCE)
			.untilAsserted(() -> assertThat(other.state(day, NOW, nextDay).remaining()).as("the new day's one call")
				.isEqualTo(9));
	}

	@Test
	void inFallbackAReplicaTakesOneOverTheLiveReplicasAtMostItsLocalShare() {
		RedisQuotaStore one = store(Duration.ofMillis(200), 1.0);
		RedisQuotaStore two = store(Duration.ofMillis(200), 1.0);
		one.watchLimits("llmq:{late}:limits", (field, limit) -> {
		});
		two.watchLimits("llmq:{late}:limits", (field, limit) -> {
		});
		await().atMost(PATIENCE).until(() -> one.share("late") == 0.5);
		pause(Duration.ofMillis(1_500));
		// 600 a minute, two replicas live: this one takes 300 while Redis is down
		BookingRequest some = new BookingRequest(List.of(new Charge(this.tokens, 200)), List.of(), List.of(), null);
		assertThat(one.book(some, NOW, WALL, NOW)).isInstanceOfSatisfying(Booking.Booked.class,
				(booked) -> assertThat(booked.fallback()).isTrue());
		assertThat(one.book(some, NOW, WALL, NOW)).as("200 more would pass the replica's 300")
			.isInstanceOf(Booking.Refused.class);
	}

	/**
	 * The local books keep the interactive reserve from a batch call while an interactive
	 * call waited, as the local store and Redis do: a replica in fallback is no place for
	 * batch calls to take the room interactive calls are waiting for.
	 */
	@Test
	void inFallbackABatchCallLeavesTheInteractiveReserveAsTheLocalStoreDoes() {
		// one replica, taking the whole limit in fallback: its books are the local
		// store's
		RedisQuotaStore store = store(Duration.ofMillis(200), 1.0);
		LocalQuotaStore local = new LocalQuotaStore();
		this.resources.add(local);
		String reserveKey = "llmq:{late}:account:interactive-wait";
		long lendAfter = Duration.ofSeconds(60).toNanos();
		BookingRequest interactive = new BookingRequest(List.of(new Charge(this.tokens, 500)), List.of(), List.of(),
				new BookingRequest.Reserve(false, reserveKey, 0.5, lendAfter));
		BookingRequest waits = new BookingRequest(List.of(new Charge(this.tokens, 200)), List.of(), List.of(),
				new BookingRequest.Reserve(false, reserveKey, 0.5, lendAfter));
		BookingRequest batch = new BookingRequest(List.of(new Charge(this.tokens, 50)), List.of(), List.of(),
				new BookingRequest.Reserve(true, reserveKey, 0.5, lendAfter));
		pause(Duration.ofMillis(1_500));
		assertThat(store.book(interactive, NOW, WALL, NOW)).isInstanceOfSatisfying(Booking.Booked.class,
				(booked) -> assertThat(booked.fallback()).isTrue());
		assertThat(store.status().reachable()).as("judged down").isFalse();
		assertThat(local.book(interactive, NOW, WALL, NOW)).isInstanceOf(Booking.Booked.class);
		// an interactive call that cannot start at once: the reserve is kept from batch
		// calls for a minute
		assertThat(local.book(waits, NOW, WALL, NOW)).isInstanceOf(Booking.Refused.class);
		assertThat(store.book(waits, NOW, WALL, NOW)).isInstanceOf(Booking.Refused.class);
		assertThat(local.book(batch, NOW, WALL, NOW)).as("the local store: 100 left, 300 kept for interactive calls")
			.isInstanceOf(Booking.Refused.class);
		assertThat(store.book(batch, NOW, WALL, NOW)).as("the fallback books, as the local store")
			.isInstanceOf(Booking.Refused.class);
	}

	/**
	 * A replica's share of the shared slots in fallback counts the calls it still has in
	 * flight from Redis: two replicas, each with half of two slots and one call booked in
	 * Redis still running, start no more calls while Redis is down (two are in flight
	 * already, the whole limit).
	 */
	@Test
	void inFallbackAReplicasShareOfTheSlotsCountsItsCallsStillInFlightFromRedis() {
		BucketSpec twoSlots = new BucketSpec("llmq:{late}:two-slots", BucketSpec.Scope.POOL,
				Dimension.CONCURRENT_REQUESTS, 2, 2, java.time.ZoneOffset.UTC);
		BookingRequest call = new BookingRequest(List.of(new Charge(this.tokens, 1)), List.of(twoSlots), List.of(),
				null);
		RedisQuotaStore one = store(Duration.ofMillis(200), 0.5);
		RedisQuotaStore two = store(Duration.ofMillis(200), 0.5);
		assertThat(one.book(call, NOW, WALL, NOW)).isInstanceOfSatisfying(Booking.Booked.class,
				(booked) -> assertThat(booked.fallback()).isFalse());
		assertThat(two.book(call, NOW, WALL, NOW)).isInstanceOfSatisfying(Booking.Booked.class,
				(booked) -> assertThat(booked.fallback()).isFalse());
		pause(Duration.ofMillis(1_500));
		Booking third = one.book(call, NOW, WALL, NOW);
		Booking fourth = two.book(call, NOW, WALL, NOW);
		assertThat(one.status().reachable()).as("judged down").isFalse();
		assertThat(two.status().reachable()).as("judged down").isFalse();
		assertThat(List.of(third, fourth)).as("two calls in flight already, of two slots")
			.allSatisfy((booking) -> assertThat(booking).isInstanceOf(Booking.Refused.class));
	}

	private RedisQuotaStore store(Duration timeout) {
		return store(timeout, 0.5);
	}

	private RedisQuotaStore store(Duration timeout, double localShare) {
		RedisQuotaStore store = new RedisQuotaStore(this.connectionFactory, new RedisQuotaStore.Settings(
				RedisQuotaStore.OnFailure.LOCAL, localShare, Duration.ofSeconds(30), timeout), () -> NOW);
		this.resources.add(0, store);
		return store;
	}

	private void pause(Duration duration) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			connection.execute("CLIENT", "PAUSE".getBytes(), Long.toString(duration.toMillis()).getBytes(),
					"ALL".getBytes());
		}
	}

}
