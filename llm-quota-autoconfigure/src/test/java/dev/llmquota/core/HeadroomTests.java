package dev.llmquota.core;

import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.Test;

import static dev.llmquota.core.Dimension.REQUESTS_PER_MINUTE;
import static dev.llmquota.core.Dimension.TOKENS_PER_MINUTE;
import static dev.llmquota.core.TestConfigs.limits;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * How soon a call would be admitted were it asked now ({@link QuotaEngine#headroom}):
 * what a route compares across its targets. It takes nothing, and counts the calls
 * already waiting before it.
 */
class HeadroomTests {

	private final ManualClock clock = new ManualClock();

	private final TestStores stores = new TestStores();

	@org.junit.jupiter.api.AfterEach
	void close() {
		this.stores.close();
	}

	private QuotaEngine engine(Limits limits) {
		return TestConfigs.provider()
			.burstWindow(Duration.ofSeconds(60))
			.inFlightGate(false)
			.model("m", limits)
			.engine(new dev.llmquota.store.LocalQuotaStore(), this.clock);
	}

	@Test
	void aPoolWithRoomAdmitsAtOnceAndTheQuestionTakesNothing() {
		QuotaEngine engine = engine(limits(REQUESTS_PER_MINUTE, 2));
		Pool pool = engine.pool("openai", "m");
		for (int i = 0; i < 5; i++) {
			Headroom headroom = engine.headroom(pool, new Demand(10, 10), null);
			assertThat(headroom.waitNanos()).isZero();
			assertThat(headroom.binding()).isNull();
			assertThat(headroom.state()).isEqualTo(QuotaState.OK);
		}
		assertThat(engine.tryAcquire(pool, new Demand(10, 10), null)).isNotNull();
		assertThat(engine.tryAcquire(pool, new Demand(10, 10), null)).isNotNull();
	}

	@Test
	void aFullBucketTellsItsRefillAndNamesItself() {
		QuotaEngine engine = engine(limits(REQUESTS_PER_MINUTE, 2));
		Pool pool = engine.pool("openai", "m");
		engine.tryAcquire(pool, new Demand(10, 10), null);
		engine.tryAcquire(pool, new Demand(10, 10), null);
		Headroom headroom = engine.headroom(pool, new Demand(10, 10), null);
		// 2 a minute: one back in 30 s
		assertThat(headroom.waitNanos()).isEqualTo(Duration.ofSeconds(30).toNanos());
		assertThat(headroom.binding()).isEqualTo("pool requests-per-minute");
	}

	@Test
	void callsWaitingBeforeItPushItBack() {
		QuotaEngine engine = engine(limits(TOKENS_PER_MINUTE, 6_000));
		Pool pool = engine.pool("openai", "m");
		assertThat(engine.tryAcquire(pool, new Demand(6_000, 0), null)).isNotNull();
		Calls.Call waiting = Calls.acquire(engine, pool, new Demand(3_000, 0));
		assertThat(waiting.admitted()).isFalse();
		// behind the 3,000 waiting: 6,000 tokens at 100 a second
		assertThat(engine.headroom(pool, new Demand(3_000, 0), null).waitNanos())
			.isEqualTo(Duration.ofSeconds(60).toNanos());
	}

	@Test
	void withASharedStoreTheStoresLastAnswerIsThisReplicasView() {
		QuotaEngine engine = this.stores.engine(TestConfigs.provider()
			.burstWindow(Duration.ofSeconds(60))
			.inFlightGate(false)
			.model("m", limits(REQUESTS_PER_MINUTE, 2)), TestStores.Kind.REDIS, this.clock);
		Pool pool = engine.pool("openai", "m");
		Calls.acquire(engine, pool, new Demand(10, 10));
		Calls.acquire(engine, pool, new Demand(10, 10));
		// a third is booked ahead, to start when one of the two a minute comes back
		Calls.Call third = Calls.acquire(engine, pool, new Demand(10, 10), null, Duration.ofMinutes(1));
		Calls.settle(engine);
		assertThat(third.admitted()).isFalse();
		// the first question has the pool's books read: a fourth fits when the second of
		// the minute comes back
		engine.headroom(pool, new Demand(10, 10), null);
		Calls.settle(engine);
		assertThat(engine.headroom(pool, new Demand(10, 10), null).waitNanos())
			.isEqualTo(Duration.ofSeconds(60).toNanos());
		// cancelled, the third leaves the last read behind until the next one
		third.subscription.dispose();
		Calls.settle(engine);
		assertThat(engine.headroom(pool, new Demand(10, 10), null).waitNanos())
			.isEqualTo(Duration.ofSeconds(60).toNanos());
		this.clock.advance(Duration.ofSeconds(1));
		Calls.settle(engine);
		assertThat(engine.headroom(pool, new Demand(10, 10), null).waitNanos())
			.isEqualTo(Duration.ofSeconds(29).toNanos());
	}

	@Test
	void withASharedStoreOtherReplicasCallsShowOnceItsBooksAreRead() {
		TestConfigs config = TestConfigs.provider()
			.burstWindow(Duration.ofSeconds(60))
			.inFlightGate(false)
			.model("m", limits(REQUESTS_PER_MINUTE, 2));
		QuotaEngine here = this.stores.engine(config, TestStores.Kind.REDIS, this.clock);
		QuotaEngine there = this.stores.replica(config, this.clock);
		Pool pool = here.pool("openai", "m");
		Pool theirs = there.pool("openai", "m");
		takeOne(there, theirs);
		// never told of the pool, this replica sees it free and reads its books
		// from then on
		assertThat(here.headroom(pool, new Demand(10, 10), null).waitNanos()).isZero();
		Calls.settle(here);
		assertThat(here.headroom(pool, new Demand(10, 10), null).waitNanos()).isZero();
		// the other replica takes the last request of the minute: seen at the next read
		takeOne(there, theirs);
		assertThat(here.headroom(pool, new Demand(10, 10), null).waitNanos()).isZero();
		this.clock.advance(Duration.ofSeconds(1));
		Calls.settle(here);
		assertThat(here.headroom(pool, new Demand(10, 10), null).waitNanos())
			.isEqualTo(Duration.ofSeconds(29).toNanos());
		// read every second while routes ask; a minute after the last question, no more
		long timers = this.clock.scheduledTimers();
		this.clock.advance(Duration.ofSeconds(10));
		assertThat(this.clock.scheduledTimers() - timers).isEqualTo(10);
		this.clock.advance(Duration.ofSeconds(55));
		timers = this.clock.scheduledTimers();
		this.clock.advance(Duration.ofSeconds(10));
		assertThat(this.clock.scheduledTimers()).isEqualTo(timers);
	}

	private static void takeOne(QuotaEngine engine, Pool pool) {
		Calls.Call call = Calls.acquire(engine, pool, new Demand(10, 10));
		Calls.settle(engine);
		assertThat(call.admitted()).isTrue();
		call.permit().release();
	}

	@Test
	void callsWaitingBeforeItCountInFullBeyondTheBucketsCapacity() {
		// 60,000 a minute over a 2 s burst: 1,000 a second, 2,000 at most at once
		QuotaEngine engine = TestConfigs.provider()
			.burstWindow(Duration.ofSeconds(2))
			.inFlightGate(false)
			.model("m", limits(TOKENS_PER_MINUTE, 60_000))
			.engine(new dev.llmquota.store.LocalQuotaStore(), this.clock);
		Pool pool = engine.pool("openai", "m");
		assertThat(engine.tryAcquire(pool, new Demand(2_000, 0), null)).isNotNull();
		for (int i = 0; i < 3; i++) {
			assertThat(Calls.acquire(engine, pool, new Demand(2_000, 0), null, Duration.ofMinutes(1)).admitted())
				.isFalse();
		}
		// 6,000 waiting and its own 2,000, from an empty bucket: 8 s
		assertThat(engine.headroom(pool, new Demand(2_000, 0), null).waitNanos())
			.isEqualTo(Duration.ofSeconds(8).toNanos());
	}

	@Test
	void aProviderPenaltyHoldsItUntilItEnds() {
		QuotaEngine engine = engine(limits(REQUESTS_PER_MINUTE, 600));
		Pool pool = engine.pool("openai", "m");
		engine.rateLimited(pool, REQUESTS_PER_MINUTE, Duration.ofSeconds(20));
		Headroom headroom = engine.headroom(pool, new Demand(10, 10), null);
		assertThat(headroom.waitNanos()).isEqualTo(Duration.ofSeconds(20).toNanos());
		assertThat(headroom.binding()).isEqualTo("provider penalty");
		assertThat(headroom.state()).isEqualTo(QuotaState.THROTTLED);
	}

	@Test
	void aSpentQuotaNeverAdmitsUntilItsProbeIsDue() {
		QuotaEngine engine = engine(limits(REQUESTS_PER_MINUTE, 600));
		Pool pool = engine.pool("openai", "m");
		engine.exhaust(pool, false, null, "insufficient_quota", null);
		Headroom headroom = engine.headroom(pool, new Demand(10, 10), null);
		assertThat(headroom.never()).isTrue();
		assertThat(headroom.state()).isEqualTo(QuotaState.EXHAUSTED);
		this.clock.advance(engine.config().settings().exhaustedProbeInterval());
		assertThat(engine.headroom(pool, new Demand(10, 10), null).waitNanos()).as("the probe may go").isZero();
	}

	@Test
	void aSpentQuotaWithAKnownResetNeverAdmitsBeforeIt() {
		QuotaEngine engine = engine(limits(REQUESTS_PER_MINUTE, 600));
		Pool pool = engine.pool("openai", "m");
		engine.exhaust(pool, false, null, "per-day", this.clock.instant().plus(Duration.ofHours(1)));
		assertThat(engine.headroom(pool, new Demand(10, 10), null).never()).isTrue();
	}

}
