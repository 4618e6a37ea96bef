package dev.llmquota.core;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import dev.llmquota.BudgetExhaustedException;
import dev.llmquota.QuotaEngineClosedException;
import dev.llmquota.QuotaExhaustedException;
import dev.llmquota.QuotaWaitTimeoutException;
import dev.llmquota.store.LocalQuotaStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static dev.llmquota.core.BucketSpec.Scope.ACCOUNT;
import static dev.llmquota.core.BucketSpec.Scope.POOL;
import static dev.llmquota.core.Calls.acquire;
import static dev.llmquota.core.Dimension.CONCURRENT_REQUESTS;
import static dev.llmquota.core.Dimension.INPUT_TOKENS_PER_MINUTE;
import static dev.llmquota.core.Dimension.OUTPUT_TOKENS_PER_MINUTE;
import static dev.llmquota.core.Dimension.REQUESTS_PER_DAY;
import static dev.llmquota.core.Dimension.REQUESTS_PER_MINUTE;
import static dev.llmquota.core.Dimension.TOKENS_PER_DAY;
import static dev.llmquota.core.Dimension.TOKENS_PER_MINUTE;
import static dev.llmquota.core.TestConfigs.limits;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine's accounting and waiting, driven by a manual clock.
 */
class QuotaEngineTests {

	private final ManualClock clock = new ManualClock();

	private final LocalQuotaStore localStore = new LocalQuotaStore();

	private final TestStores stores = new TestStores();

	@AfterEach
	void closeStores() {
		this.stores.close();
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void reservesMaxTokensUntilUsageArrives(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.burstWindow(Duration.ofSeconds(60))
			.inFlightGate(false)
			.model("gpt-4o", limits(OUTPUT_TOKENS_PER_MINUTE, 10_000, TOKENS_PER_MINUTE, 100_000))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "gpt-4o");
		Calls.Call call = acquire(engine, pool, new Demand(1_000, 4_096));
		assertThat(call.admitted()).isTrue();
		assertThat(remaining(engine, pool, OUTPUT_TOKENS_PER_MINUTE)).isEqualTo(10_000 - 4_096);
		assertThat(remaining(engine, pool, TOKENS_PER_MINUTE)).isEqualTo(100_000 - 5_096);
		call.permit().complete(new Usage(1_000, 0, 40));
		assertThat(remaining(engine, pool, OUTPUT_TOKENS_PER_MINUTE)).isEqualTo(10_000 - 40);
		assertThat(remaining(engine, pool, TOKENS_PER_MINUTE)).isEqualTo(100_000 - 1_040);
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void underEstimatedInputIsChargedEvenIntoDebtSoLaterCallsWait(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("m", limits(INPUT_TOKENS_PER_MINUTE, 60_000))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		// capacity 2 s of 60,000/min = 2,000
		Calls.Call first = acquire(engine, pool, new Demand(1_500, 0));
		first.permit().complete(new Usage(4_000, 0, 0));
		assertThat(remaining(engine, pool, INPUT_TOKENS_PER_MINUTE)).isEqualTo(2_000 - 4_000);
		Calls.Call second = acquire(engine, pool, new Demand(100, 0));
		assertThat(second.admitted()).isFalse();
		// 2,100 tokens at 1,000 per second
		this.clock.advance(Duration.ofMillis(2_099));
		assertThat(second.admitted()).isFalse();
		this.clock.advance(Duration.ofMillis(1));
		assertThat(second.admitted()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void cachedInputIsRefundedWhereTheProviderDoesNotCountIt(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.burstWindow(Duration.ofSeconds(60))
			.accounting(new Accounting(false, true, false, 1))
			.model("claude", limits(INPUT_TOKENS_PER_MINUTE, 50_000, OUTPUT_TOKENS_PER_MINUTE, 8_000))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "claude");
		Calls.Call call = acquire(engine, pool, new Demand(10_000, 4_096));
		// reserve-max-tokens false: no output reserved at admission, the actual output
		// charged at the end
		assertThat(remaining(engine, pool, OUTPUT_TOKENS_PER_MINUTE)).isEqualTo(8_000);
		call.permit().complete(new Usage(10_000, 9_000, 300));
		assertThat(remaining(engine, pool, INPUT_TOKENS_PER_MINUTE)).isEqualTo(50_000 - 1_000);
		assertThat(remaining(engine, pool, OUTPUT_TOKENS_PER_MINUTE)).isEqualTo(8_000 - 300);
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void outputBurndownMultipliesOutputAtAdmissionAndSettlement(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.burstWindow(Duration.ofSeconds(60))
			.accounting(new Accounting(true, true, true, 5))
			.model("claude-bedrock", limits(TOKENS_PER_MINUTE, 100_000))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "claude-bedrock");
		Calls.Call call = acquire(engine, pool, new Demand(1_000, 1_000));
		assertThat(remaining(engine, pool, TOKENS_PER_MINUTE)).isEqualTo(100_000 - 6_000);
		call.permit().complete(new Usage(1_000, 0, 100));
		assertThat(remaining(engine, pool, TOKENS_PER_MINUTE)).isEqualTo(100_000 - 1_500);
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void admissionIsAConjunctionThatTakesNothingWhenOneBucketIsShort(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.burstWindow(Duration.ofSeconds(60))
			.model("m", limits(REQUESTS_PER_MINUTE, 100, TOKENS_PER_MINUTE, 10_000))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		acquire(engine, pool, new Demand(9_000, 0));
		Calls.Call blocked = acquire(engine, pool, new Demand(5_000, 0), null, Duration.ZERO);
		assertThat(blocked.error()).isInstanceOf(QuotaWaitTimeoutException.class);
		assertThat(((QuotaWaitTimeoutException) blocked.error()).getDimension()).isEqualTo("tokens-per-minute");
		assertThat(remaining(engine, pool, REQUESTS_PER_MINUTE)).isEqualTo(99);
		assertThat(remaining(engine, pool, TOKENS_PER_MINUTE)).isEqualTo(1_000);
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aWaitThatTimesOutSaysWhenTheBlockingBucketWouldAdmitTheCall(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.burstWindow(Duration.ofSeconds(60))
			.model("m", limits(REQUESTS_PER_MINUTE, 100, TOKENS_PER_MINUTE, 10_000))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		acquire(engine, pool, new Demand(9_000, 0));
		Calls.Call blocked = acquire(engine, pool, new Demand(5_000, 0), null, Duration.ofSeconds(4));
		this.clock.advance(Duration.ofSeconds(4));
		QuotaWaitTimeoutException timeout = (QuotaWaitTimeoutException) blocked.error();
		// 4,000 short at 10,000 a minute: the bucket admits it 24 s after it asked
		assertThat(timeout.getRetryAfter()).isEqualTo(Duration.ofSeconds(20));
		assertThat(timeout.getMessage()).contains("within 4s").contains("in 20s");
	}

	/**
	 * A call held past its max-wait by a 429 that named no dimension says so, instead of
	 * blaming a requests-per-minute limit the pool does not have.
	 */
	@Test
	void aWaitHeldByAPenaltyNamingNoDimensionTimesOutSayingSo() {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("m", limits(TOKENS_PER_MINUTE, 10_000))
			.engine(new LocalQuotaStore(), this.clock);
		Pool pool = engine.pool("openai", "m");
		engine.rateLimited(pool, null, Duration.ofSeconds(30));
		Calls.Call held = acquire(engine, pool, new Demand(100, 0), null, Duration.ofSeconds(2));
		this.clock.advance(Duration.ofSeconds(2));
		QuotaWaitTimeoutException timeout = (QuotaWaitTimeoutException) held.error();
		assertThat(timeout.getDimension()).isEqualTo("unknown");
		assertThat(timeout.getMessage()).contains("named no dimension").doesNotContain("requests-per-minute");
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void oversizedCallIsAdmittedWhenTheBucketIsFullAndChargedInFull(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("m", limits(TOKENS_PER_MINUTE, 30_000))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		// capacity: 2 s of 30,000/min = 1,000 tokens; the call is 5 x that
		Calls.Call big = acquire(engine, pool, new Demand(4_000, 1_000));
		assertThat(big.admitted()).isTrue();
		assertThat(remaining(engine, pool, TOKENS_PER_MINUTE)).isEqualTo(1_000 - 5_000);
		Calls.Call next = acquire(engine, pool, new Demand(10, 0));
		this.clock.advance(Duration.ofMillis(7_999));
		assertThat(next.admitted()).as("the debt of 4,000 is repaid at 500/s").isFalse();
		this.clock.advance(Duration.ofMillis(21));
		assertThat(next.admitted()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void oversizedCallWaitsForAFullBucketRatherThanHanging(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("m", limits(TOKENS_PER_MINUTE, 30_000))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		acquire(engine, pool, new Demand(600, 0));
		Calls.Call big = acquire(engine, pool, new Demand(50_000, 0));
		assertThat(big.admitted()).isFalse();
		this.clock.advance(Duration.ofMillis(1_200));
		assertThat(big.admitted()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void oversizedCallIsClampedOnTheInFlightGateAndAdmittedAlone(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.burstWindow(Duration.ofSeconds(60))
			.model("m", limits(TOKENS_PER_MINUTE, 1_000_000))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		// in-flight bound: 1,000,000 / 60 x 1.4 = 23,333 tokens
		Calls.Call small = acquire(engine, pool, new Demand(100, 0));
		Calls.Call huge = acquire(engine, pool, new Demand(40_000, 0));
		assertThat(huge.admitted()).isFalse();
		small.permit().complete(new Usage(100, 0, 0));
		assertThat(huge.admitted()).isTrue();
		engine.awaitQuiet();
		assertThat(engine.snapshot(pool).gate(POOL, TOKENS_PER_MINUTE, true).inUse())
			.isEqualTo(engine.snapshot(pool).gate(POOL, TOKENS_PER_MINUTE, true).capacity());
		Calls.Call after = acquire(engine, pool, new Demand(1, 0));
		assertThat(after.admitted()).isFalse();
		huge.permit().release();
		assertThat(after.admitted()).isTrue();
	}

	/**
	 * A call its buckets refused is looked at again when a refund makes room, not only
	 * when the wait it was told has passed, on either store.
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aRefundMakesRoomForAWaitingCallBeforeItsDeadline(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.headroom(1.0)
			.burstWindow(Duration.ofSeconds(1))
			.model("m", limits(TOKENS_PER_MINUTE, 6_000))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		// a bucket of 100 tokens refilled at 100 a second; the first call reserves it all
		Calls.Call first = acquire(engine, pool, new Demand(10, 90));
		assertThat(first.admitted()).isTrue();
		// 50 tokens: half a second away, beyond its 300 ms
		Calls.Call second = acquire(engine, pool, new Demand(10, 40), null, Duration.ofMillis(300));
		assertThat(second.admitted()).isFalse();
		// 85 of the 90 output tokens unused come back: room for the second call now
		first.permit().complete(new Usage(10, 0, 5));
		assertThat(second.admitted()).isTrue();
		assertThat(second.waited()).isZero();
	}

	/**
	 * A refund with nobody waiting asks nothing of the admission lock: an answer ends on
	 * an HTTP client's event loop, which must not wait while callers are admitted.
	 */
	@Test
	void aRefundWithNobodyWaitingLeavesTheAdmissionLockAlone() throws Exception {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.headroom(1.0)
			.burstWindow(Duration.ofSeconds(1))
			.model("m", limits(TOKENS_PER_MINUTE, 6_000))
			.engine(this.localStore, this.clock);
		Pool pool = engine.pool("openai", "m");
		Calls.Call call = acquire(engine, pool, new Demand(10, 90));
		ReentrantLock lock = pool.account().queue().lock();
		lock.lock();
		try {
			CompletableFuture<Void> reconciled = CompletableFuture
				.runAsync(() -> call.permit().reconcile(new Usage(10, 0, 5)));
			// done while another thread holds the lock, not stuck behind it
			reconciled.get(5, TimeUnit.SECONDS);
		}
		finally {
			lock.unlock();
		}
		assertThat(remaining(engine, pool, TOKENS_PER_MINUTE)).isEqualTo(100 - 15);
	}

	/**
	 * A provider's rate-limit penalty holds the pool's calls, those that come during it
	 * too, until it ends; then they go at once.
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aPenaltyHoldsThePoolsCallsUntilItEnds(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("m", limits(REQUESTS_PER_MINUTE, 600))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		engine.penalize(pool, TOKENS_PER_MINUTE, Duration.ofSeconds(2));
		Calls.Call held = acquire(engine, pool, new Demand(1, 1));
		this.clock.advance(Duration.ofMillis(1_999));
		assertThat(held.admitted()).isFalse();
		this.clock.advance(Duration.ofMillis(1));
		assertThat(held.admitted()).isTrue();
		assertThat(held.waited()).isEqualTo(Duration.ofSeconds(2));
	}

	/**
	 * A later, shorter penalty on another dimension does not cut short a longer one still
	 * running: the fast path and the queue both hold calls until the longest ends.
	 */
	@Test
	void aLaterShorterPenaltyDoesNotCutShortALongerOne() {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("m", limits(REQUESTS_PER_MINUTE, 600))
			.engine(this.localStore, this.clock);
		Pool pool = engine.pool("openai", "m");
		engine.penalize(pool, TOKENS_PER_MINUTE, Duration.ofSeconds(10));
		engine.penalize(pool, REQUESTS_PER_MINUTE, Duration.ofSeconds(2));
		this.clock.advance(Duration.ofSeconds(3));
		assertThat(engine.tryAcquire(pool, new Demand(1, 1), null)).isNull();
		Calls.Call held = acquire(engine, pool, new Demand(1, 1));
		this.clock.advance(Duration.ofSeconds(7).minusMillis(1));
		assertThat(held.admitted()).isFalse();
		this.clock.advance(Duration.ofMillis(1));
		assertThat(held.admitted()).isTrue();
		assertThat(engine.tryAcquire(pool, new Demand(1, 1), null)).isNotNull();
	}

	/**
	 * A penalty longer than a call may wait fails the call at its deadline, naming the
	 * dimension the provider named.
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aPenaltyBeyondMaxWaitFailsTheCallNamingTheProvidersDimension(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("m", limits(REQUESTS_PER_MINUTE, 600))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		engine.penalize(pool, TOKENS_PER_MINUTE, Duration.ofSeconds(30));
		Calls.Call held = acquire(engine, pool, new Demand(1, 1), null, Duration.ofSeconds(1));
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(held.error()).isInstanceOf(QuotaWaitTimeoutException.class);
		assertThat(((QuotaWaitTimeoutException) held.error()).getDimension()).isEqualTo("tokens-per-minute");
	}

	/** A spent quota fails calls fast, without waiting, until the reset it was given. */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aSpentQuotaFailsCallsFastUntilItsReset(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("m", limits(REQUESTS_PER_MINUTE, 600))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		engine.exhaust(pool, false, TOKENS_PER_DAY, "You exceeded your current quota",
				this.clock.instant().plus(Duration.ofMinutes(5)));
		assertThat(acquire(engine, pool, new Demand(1, 1)).error()).isInstanceOf(QuotaExhaustedException.class);
		this.clock.advance(Duration.ofMinutes(5));
		assertThat(acquire(engine, pool, new Demand(1, 1)).admitted()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void waitEndsAtMaxWaitNamingTheDimensionThatBlocked(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("m", limits(REQUESTS_PER_MINUTE, 60))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		acquire(engine, pool, new Demand(1, 1));
		acquire(engine, pool, new Demand(1, 1));
		Calls.Call late = acquire(engine, pool, new Demand(1, 1), null, Duration.ofMillis(500));
		this.clock.advance(Duration.ofMillis(499));
		assertThat(late.error()).isNull();
		this.clock.advance(Duration.ofMillis(1));
		assertThat(late.error()).isInstanceOf(QuotaWaitTimeoutException.class)
			.hasMessageContaining("requests-per-minute")
			.hasMessageContaining("model 'm'");
		QuotaWaitTimeoutException timeout = (QuotaWaitTimeoutException) late.error();
		assertThat(timeout.getProvider()).isEqualTo("openai");
		assertThat(timeout.getRegion()).isEqualTo("us");
		assertThat(timeout.getWaited()).isEqualTo(Duration.ofMillis(500));
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void cancellingAWaitingCallLeavesTheQueueAndTakesNothing(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("m", limits(REQUESTS_PER_MINUTE, 60))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		acquire(engine, pool, new Demand(1, 1));
		acquire(engine, pool, new Demand(1, 1));
		Calls.Call cancelled = acquire(engine, pool, new Demand(1, 1));
		Calls.Call behind = acquire(engine, pool, new Demand(1, 1));
		// both wait: in the queue here, booked ahead for 1 s and 2 s in shared books
		engine.awaitQuiet();
		cancelled.cancel();
		assertThat(engine.waiting(pool.account())).isEqualTo(1);
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(cancelled.admitted()).isFalse();
		// a call booked ahead in shared books keeps its start
		assertThat(behind.admitted()).as("the cancelled call took no turn").isEqualTo(store == TestStores.Kind.LOCAL);
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(behind.admitted()).isTrue();
		assertThat(acquire(engine, pool, new Demand(1, 1)).admitted()).as("the second the cancelled call gave back")
			.isTrue();
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void dailyLimitFailsFastUntilTheNextDayInItsZone(TestStores.Kind store) {
		ManualClock evening = new ManualClock(Instant.parse("2026-11-30T20:00:00Z"));
		QuotaEngine engine = TestConfigs.provider()
			.zone(ZoneId.of("America/Los_Angeles"))
			.model("m", limits(REQUESTS_PER_DAY, 2))
			.engine(this.stores.open(store, evening), evening);
		Pool pool = engine.pool("openai", "m");
		acquire(engine, pool, new Demand(1, 1));
		acquire(engine, pool, new Demand(1, 1));
		Calls.Call third = acquire(engine, pool, new Demand(1, 1));
		assertThat(third.error()).isInstanceOf(BudgetExhaustedException.class);
		BudgetExhaustedException spent = (BudgetExhaustedException) third.error();
		assertThat(spent.getDimension()).isEqualTo("requests-per-day");
		// midnight in Los Angeles
		assertThat(spent.getReset()).isEqualTo(Instant.parse("2026-12-01T08:00:00Z"));
		evening.advance(Duration.ofHours(12));
		assertThat(acquire(engine, pool, new Demand(1, 1)).admitted()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void dailyLimitWaitsWhenTheNextDayStartsWithinMaxWait(TestStores.Kind store) {
		ManualClock late = new ManualClock(Instant.parse("2026-11-30T23:59:50Z"));
		QuotaEngine engine = TestConfigs.provider()
			.model("m", limits(TOKENS_PER_DAY, 1_000))
			.engine(this.stores.open(store, late), late);
		Pool pool = engine.pool("openai", "m");
		acquire(engine, pool, new Demand(900, 100));
		Calls.Call waiting = acquire(engine, pool, new Demand(10, 10));
		assertThat(waiting.error()).isNull();
		assertThat(waiting.admitted()).isFalse();
		late.advance(Duration.ofSeconds(10));
		assertThat(waiting.admitted()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void wallClockJumpingBackNeverResetsADailyCounter(TestStores.Kind store) {
		ManualClock clock = new ManualClock(Instant.parse("2026-12-01T00:00:05Z"));
		QuotaEngine engine = TestConfigs.provider()
			.model("m", limits(REQUESTS_PER_DAY, 1))
			.engine(this.stores.open(store, clock), clock);
		Pool pool = engine.pool("openai", "m");
		acquire(engine, pool, new Demand(1, 1));
		clock.jumpWall(Duration.ofSeconds(-10));
		assertThat(acquire(engine, pool, new Demand(1, 1)).error()).isInstanceOf(BudgetExhaustedException.class);
		clock.jumpWall(Duration.ofSeconds(10));
		assertThat(acquire(engine, pool, new Demand(1, 1)).error()).isInstanceOf(BudgetExhaustedException.class);
	}

	/**
	 * {@code System.nanoTime()} has an arbitrary origin and may read negative: with no
	 * penalty ever given, every bucket full, a call is admitted at once. A penalty's end
	 * of 0 meant none, and held every call until the clock passed 0.
	 */
	@Test
	void aMonotonicClockReadingNegativeAdmitsCallsWithRoom() {
		ManualClock negative = new ManualClock(Instant.parse("2026-11-30T12:00:00Z"), -3_600_000_000_000L);
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("m", limits(REQUESTS_PER_MINUTE, 600, TOKENS_PER_MINUTE, 1_000_000))
			.engine(this.localStore, negative);
		Pool pool = engine.pool("openai", "m");
		assertThat(engine.tryAcquire(pool, new Demand(10, 10), Priority.INTERACTIVE)).isNotNull();
		assertThat(acquire(engine, pool, new Demand(10, 10)).admitted()).isTrue();
		assertThat(engine.state(pool)).isEqualTo(QuotaState.OK);
	}

	/**
	 * A wall clock stepped back over midnight (an NTP step) while a call was in flight:
	 * the day counter, which never goes back, still counts the day the call charged, so
	 * the call's refund (the unused part of its budget reservation) lands there; it was
	 * dropped as if the day had changed.
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aRefundAfterTheWallClockSteppedBackOverMidnightIsGiven(TestStores.Kind store) {
		ManualClock clock = new ManualClock(Instant.parse("2026-12-01T00:00:05Z"));
		QuotaEngine engine = dailyBudgetJustAfterMidnight(store, clock);
		Pool pool = engine.pool("openai", "gpt-4o");
		// reserves 1,000 x 10 + 20,000 x 30 = 610,000 millionths of the day's 1,000,000
		Calls.Call call = acquire(engine, pool, new Demand(1_000, 20_000));
		assertThat(call.admitted()).isTrue();
		clock.jumpWall(Duration.ofSeconds(-10));
		// the call cost 1,000 x 10 + 100 x 30 = 13,000 millionths
		call.permit().complete(new Usage(1_000, 0, 100));
		engine.awaitQuiet();
		assertThat(engine.snapshot(pool).buckets().get(0).remaining()).isEqualTo(1_000_000 - 13_000);
	}

	/**
	 * A call booked while the wall clock, stepped back, read the day before the one the
	 * day counter had opened: the counter charged its day, so the refund of what the call
	 * did not use goes there too, not dropped as a refund of a day gone.
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aRefundOfACallBookedWhileTheWallClockReadTheDayBeforeIsGiven(TestStores.Kind store) {
		ManualClock clock = new ManualClock(Instant.parse("2026-12-01T00:00:05Z"));
		QuotaEngine engine = dailyBudgetJustAfterMidnight(store, clock);
		Pool pool = engine.pool("openai", "gpt-4o");
		// the day counter opens on 2026-12-01
		acquire(engine, pool, new Demand(100, 0)).permit().complete(new Usage(100, 0, 0));
		clock.jumpWall(Duration.ofSeconds(-10));
		// reserves 1,000 x 10 + 20,000 x 30 = 610,000 millionths, charged to 2026-12-01
		Calls.Call call = acquire(engine, pool, new Demand(1_000, 20_000));
		assertThat(call.admitted()).isTrue();
		clock.advance(Duration.ofSeconds(20));
		// the call cost 1,000 x 10 + 100 x 30 = 13,000 millionths
		call.permit().complete(new Usage(1_000, 0, 100));
		engine.awaitQuiet();
		assertThat(engine.snapshot(pool).buckets().get(0).remaining()).isEqualTo(1_000_000 - 1_000 - 13_000);
	}

	/**
	 * A spent quota the provider says is back in an hour ends after an hour, however the
	 * wall clock stepped meanwhile (an NTP step back of an hour held every call for two).
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aSpentQuotaWithARelativeWaitEndsWhenTheWaitHasPassedThoughTheWallClockSteppedBack(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("m", limits(REQUESTS_PER_MINUTE, 600))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		// what RefusalHandling does with a wait of the exhausted threshold or more
		engine.exhaust(pool, false, null, "retry after 3600 seconds", this.clock.instant().plus(Duration.ofHours(1)));
		this.clock.advance(Duration.ofMinutes(1));
		this.clock.jumpWall(Duration.ofHours(-1));
		this.clock.advance(Duration.ofMinutes(60));
		Calls.Call call = acquire(engine, pool, new Demand(1, 1));
		assertThat(call.error()).as("the provider's hour has passed").isNull();
		assertThat(call.admitted()).isTrue();
	}

	/**
	 * An account with a day's budget of 1.00 (input 10, output 30 a million tokens), its
	 * one model unlimited otherwise.
	 */
	private QuotaEngine dailyBudgetJustAfterMidnight(TestStores.Kind store, ManualClock clock) {
		return TestConfigs.provider()
			.inFlightGate(false)
			.accounting(new Accounting(true, true, true, 1, new Cost(10, 30, 10)))
			.account(limits(Dimension.BUDGET_PER_DAY, 1_000_000))
			.model("gpt-4o", limits())
			.engine(this.stores.open(store, clock), clock);
	}

	@Test
	void theCallsInFlightAreCountedThroughReleasesInAnyOrder() {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("m", limits(REQUESTS_PER_MINUTE, 1_000))
			.engine(this.localStore, this.clock);
		Pool pool = engine.pool("openai", "m");
		Calls.Call[] calls = new Calls.Call[5];
		for (int i = 0; i < calls.length; i++) {
			calls[i] = acquire(engine, pool, new Demand(1, 1));
		}
		assertThat(engine.inFlight(pool.account())).isEqualTo(5);
		// the middle one, the last admitted, the first admitted, one twice
		calls[2].permit().release();
		calls[4].permit().release();
		calls[0].permit().release();
		calls[0].permit().release();
		assertThat(engine.inFlight(pool.account())).isEqualTo(2);
		Calls.Call later = acquire(engine, pool, new Demand(1, 1));
		assertThat(engine.inFlight(pool.account())).isEqualTo(3);
		engine.close();
		assertThat(calls[1].permit().isReleased()).isTrue();
		assertThat(calls[3].permit().isReleased()).isTrue();
		assertThat(later.permit().isReleased()).isTrue();
		assertThat(engine.inFlight(pool.account())).isZero();
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void slotsAreReleasedExactlyOnceWhateverEndsTheCall(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.model("m", limits(CONCURRENT_REQUESTS, 2))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		Calls.Call a = acquire(engine, pool, new Demand(1, 1));
		Calls.Call b = acquire(engine, pool, new Demand(1, 1));
		a.permit().complete(new Usage(1, 0, 1));
		a.permit().release();
		a.permit().complete(null);
		assertThat(inUse(engine, pool, CONCURRENT_REQUESTS)).isEqualTo(1);
		Calls.Call c = acquire(engine, pool, new Demand(1, 1));
		Calls.Call d = acquire(engine, pool, new Demand(1, 1));
		assertThat(c.admitted()).isTrue();
		assertThat(d.admitted()).as("a double release must not open a second slot").isFalse();
		b.permit().release();
		assertThat(d.admitted()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aPermitNeverClosedGivesItsSlotsBackAfterTheLeaseTimeout(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.leaseTimeout(Duration.ofMinutes(10))
			.maxWait(Duration.ofMinutes(20))
			.model("m", limits(CONCURRENT_REQUESTS, 1))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		Calls.Call leaked = acquire(engine, pool, new Demand(1, 1));
		Calls.Call next = acquire(engine, pool, new Demand(1, 1));
		this.clock.advance(Duration.ofMinutes(10).minusNanos(1));
		assertThat(next.admitted()).isFalse();
		this.clock.advance(Duration.ofNanos(1));
		assertThat(leaked.permit().isReleased()).isTrue();
		assertThat(next.admitted()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aRefusedCallKeepsOnlyItsPerMinuteRequestWhereRefusalsCount(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("m", limits(REQUESTS_PER_MINUTE, 600, REQUESTS_PER_DAY, 100, TOKENS_PER_MINUTE, 600_000))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		Calls.Call call = acquire(engine, pool, new Demand(100, 100));
		call.permit().refuse(true);
		call.permit().release();
		assertThat(remaining(engine, pool, REQUESTS_PER_MINUTE)).as("counted, as OpenAI counts it").isEqualTo(19);
		assertThat(remaining(engine, pool, TOKENS_PER_MINUTE)).isEqualTo(20_000);
		assertThat(remaining(engine, pool, REQUESTS_PER_DAY)).as("no provider says a refusal spends the day")
			.isEqualTo(100);
	}

	@Test
	void aCallNothingStandsBeforeIsAdmittedAtOnceWithoutWaiting() {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("m", limits(TOKENS_PER_MINUTE, 60_000, CONCURRENT_REQUESTS, 2))
			.engine(this.localStore, this.clock);
		Pool pool = engine.pool("openai", "m");
		// capacity 2 s of 60,000/min = 2,000
		QuotaPermit first = engine.tryAcquire(pool, new Demand(1_000, 0), null);
		assertThat(first).isNotNull();
		assertThat(remaining(engine, pool, TOKENS_PER_MINUTE)).isEqualTo(1_000);
		Calls.Call large = acquire(engine, pool, new Demand(1_500, 0));
		assertThat(large.admitted()).isFalse();
		assertThat(engine.tryAcquire(pool, new Demand(100, 0), null)).as("a call waits: it goes first").isNull();
		this.clock.advance(Duration.ofMillis(500));
		assertThat(large.admitted()).isTrue();
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(engine.tryAcquire(pool, new Demand(1, 0), null)).as("the in-flight bound is full").isNull();
		first.complete(new Usage(1_000, 0, 0));
		assertThat(engine.tryAcquire(pool, new Demand(1, 0), null)).isNotNull();
	}

	@Test
	void theFastPathLeavesPenaltiesExhaustionAndSharedStoresToTheQueue() {
		QuotaEngine engine = TestConfigs.provider()
			.model("m", limits(REQUESTS_PER_MINUTE, 600))
			.engine(this.localStore, this.clock);
		Pool pool = engine.pool("openai", "m");
		engine.penalize(pool, REQUESTS_PER_MINUTE, Duration.ofSeconds(5));
		assertThat(engine.tryAcquire(pool, new Demand(1, 1), null)).isNull();
		this.clock.advance(Duration.ofSeconds(5));
		QuotaPermit permit = engine.tryAcquire(pool, new Demand(1, 1), null);
		assertThat(permit).isNotNull();
		permit.complete(null);
		QuotaEngine shared = TestConfigs.provider()
			.model("m", limits(REQUESTS_PER_MINUTE, 600))
			.engine(this.stores.open(TestStores.Kind.REDIS, this.clock), this.clock);
		assertThat(shared.tryAcquire(shared.pool("openai", "m"), new Demand(1, 1), null))
			.as("a shared store is asked from its own thread, never a caller's")
			.isNull();
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void eachLeakedPermitExpiresAtItsOwnLeaseTimeout(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.leaseTimeout(Duration.ofMinutes(10))
			.maxWait(Duration.ofMinutes(30))
			.model("m", limits(CONCURRENT_REQUESTS, 2))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		Calls.Call first = acquire(engine, pool, new Demand(1, 1));
		this.clock.advance(Duration.ofMinutes(4));
		Calls.Call second = acquire(engine, pool, new Demand(1, 1));
		this.clock.advance(Duration.ofMinutes(1));
		Calls.Call third = acquire(engine, pool, new Demand(1, 1));
		first.permit().complete(null);
		assertThat(third.admitted()).isTrue();
		this.clock.advance(Duration.ofMinutes(9).minusNanos(1));
		assertThat(second.permit().isReleased()).isFalse();
		this.clock.advance(Duration.ofNanos(1));
		assertThat(second.permit().isReleased()).as("admitted at 4 min, leaked: free at 14 min").isTrue();
		assertThat(third.permit().isReleased()).isFalse();
		this.clock.advance(Duration.ofMinutes(1));
		assertThat(third.permit().isReleased()).as("admitted at 5 min, leaked: free at 15 min").isTrue();
		assertThat(inUse(engine, pool, CONCURRENT_REQUESTS)).isZero();
	}

	@Test
	void admittingCallsDoesNotStartATimerForEach() {
		QuotaEngine engine = TestConfigs.provider()
			.model("m", limits(REQUESTS_PER_MINUTE, 1_000_000))
			.engine(this.localStore, this.clock);
		Pool pool = engine.pool("openai", "m");
		long before = this.clock.scheduledTimers();
		for (int i = 0; i < 100; i++) {
			Calls.Call call = acquire(engine, pool, new Demand(1, 1));
			assertThat(call.admitted()).isTrue();
			call.permit().complete(new Usage(1, 0, 1));
		}
		assertThat(this.clock.scheduledTimers() - before).as("one lease sweep, not a timer per call")
			.isLessThanOrEqualTo(1);
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void shutdownFailsWaitersClearlyAndReleasesEverySlot(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.model("m", limits(CONCURRENT_REQUESTS, 1))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		Calls.Call running = acquire(engine, pool, new Demand(1, 1));
		Calls.Call waiting = acquire(engine, pool, new Demand(1, 1));
		assertThat(running.admitted()).isTrue();
		assertThat(waiting.admitted()).isFalse();
		engine.close();
		assertThat(waiting.error()).isInstanceOf(QuotaEngineClosedException.class).hasMessageContaining("shut down");
		assertThat(running.permit().isReleased()).isTrue();
		assertThat(inUse(engine, pool, CONCURRENT_REQUESTS)).isZero();
		assertThat(acquire(engine, pool, new Demand(1, 1)).error()).isInstanceOf(QuotaEngineClosedException.class);
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void headroomScalesConcurrencyButNeverBelowOne(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.headroom(0.8)
			.model("wide", limits(CONCURRENT_REQUESTS, 64))
			.model("narrow", limits(CONCURRENT_REQUESTS, 1))
			.engine(this.stores.open(store, this.clock), this.clock);
		engine.awaitQuiet();
		assertThat(engine.snapshot(engine.pool("openai", "wide")).gate(POOL, CONCURRENT_REQUESTS, false).capacity())
			.isEqualTo(51);
		engine.awaitQuiet();
		assertThat(engine.snapshot(engine.pool("openai", "narrow")).gate(POOL, CONCURRENT_REQUESTS, false).capacity())
			.isEqualTo(1);
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void headroomAndBurstWindowSizeTheBuckets(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.headroom(0.8)
			.model("gpt-4o", limits(REQUESTS_PER_MINUTE, 500, TOKENS_PER_MINUTE, 30_000))
			.engine(this.stores.open(store, this.clock), this.clock);
		engine.awaitQuiet();
		PoolSnapshot snapshot = engine.snapshot(engine.pool("openai", "gpt-4o"));
		assertThat(snapshot.bucket(POOL, REQUESTS_PER_MINUTE).bucket().enforced()).isEqualTo(400);
		assertThat(snapshot.bucket(POOL, REQUESTS_PER_MINUTE).bucket().capacity()).isEqualTo(13);
		assertThat(snapshot.bucket(POOL, TOKENS_PER_MINUTE).bucket().enforced()).isEqualTo(24_000);
		assertThat(snapshot.bucket(POOL, TOKENS_PER_MINUTE).bucket().capacity()).isEqualTo(800);
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void interactiveCallsAreAdmittedBeforeBatchCallsWaitingOnTheSameAccount(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("m", limits(REQUESTS_PER_MINUTE, 60))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		acquire(engine, pool, new Demand(1, 1));
		acquire(engine, pool, new Demand(1, 1));
		Calls.Call batch = acquire(engine, pool, new Demand(1, 1), Priority.BATCH, null);
		Calls.Call interactive = acquire(engine, pool, new Demand(1, 1), Priority.INTERACTIVE, null);
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(interactive.admitted()).isTrue();
		assertThat(batch.admitted()).isFalse();
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(batch.admitted()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aModelsDefaultPriorityAppliesWhenTheCallNamesNone(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("nightly", limits(REQUESTS_PER_MINUTE, 60), Priority.BATCH)
			.account(limits(REQUESTS_PER_MINUTE, 60))
			.model("chat", limits(REQUESTS_PER_MINUTE, 600))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool nightly = engine.pool("openai", "nightly");
		Pool chat = engine.pool("openai", "chat");
		acquire(engine, chat, new Demand(1, 1));
		acquire(engine, chat, new Demand(1, 1));
		Calls.Call batch = acquire(engine, nightly, new Demand(1, 1));
		Calls.Call interactive = acquire(engine, chat, new Demand(1, 1));
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(interactive.admitted()).isTrue();
		assertThat(batch.admitted()).isFalse();
	}

	@Test
	void aliasesShareOnePoolAndUnlistedModelsGetTheirOwnFromTheTemplate() {
		QuotaEngine engine = TestConfigs.provider()
			.maxPools(2)
			.model("gpt-4o", limits(REQUESTS_PER_MINUTE, 500), "gpt-4o-2024-08-06")
			.template(limits(REQUESTS_PER_MINUTE, 100))
			.engine(this.localStore, this.clock);
		assertThat(engine.pool("openai", "gpt-4o-2024-08-06")).isSameAs(engine.pool("openai", "gpt-4o"));
		Pool mini = engine.pool("openai", "gpt-4o-mini");
		assertThat(mini.spec().limits().asMap()).containsEntry(REQUESTS_PER_MINUTE, 100L);
		assertThat(mini.buckets().get(0).key()).contains("gpt-4o-mini");
		Pool o3 = engine.pool("openai", "o3");
		assertThat(o3).isNotSameAs(mini);
		acquire(engine, o3, new Demand(1, 1));
		acquire(engine, mini, new Demand(1, 1));
		assertThat(engine.pool("openai", "gpt-4o-mini")).isSameAs(mini);
		acquire(engine, engine.pool("openai", "o4"), new Demand(1, 1));
		assertThat(engine.pools()).extracting(Pool::model).containsExactly("gpt-4o", "gpt-4o-mini", "o4");
		assertThat(this.localStore.size()).as("the evicted pool's buckets are forgotten").isEqualTo(2);
	}

	/**
	 * A model configured as GPT-4o and called as gpt-4o (or the other way round) is one
	 * model: its limits apply, not the template's or none. An id two configured pools
	 * share but for case matches neither but by its exact case.
	 */
	@Test
	void aModelNamedInAnotherCaseThanConfiguredIsGovernedByItsLimits() {
		QuotaEngine engine = TestConfigs.provider()
			.model("GPT-4o", limits(REQUESTS_PER_MINUTE, 500), "GPT-4o-2024-08-06")
			.model("o3", limits(REQUESTS_PER_MINUTE, 50))
			.model("O3", limits(REQUESTS_PER_MINUTE, 60))
			.template(limits(REQUESTS_PER_MINUTE, 100))
			.engine(this.localStore, this.clock);
		assertThat(engine.pool("openai", "gpt-4o")).isSameAs(engine.pool("openai", "GPT-4o"));
		assertThat(engine.pool("openai", "gpt-4o-2024-08-06")).isSameAs(engine.pool("openai", "GPT-4o"));
		assertThat(engine.pool("openai", "O3").spec().limits().asMap()).containsEntry(REQUESTS_PER_MINUTE, 60L);
		assertThat(engine.pool("openai", "o3").spec().limits().asMap()).containsEntry(REQUESTS_PER_MINUTE, 50L);
		assertThat(engine.pool("openai", "o3-mini").spec().limits().asMap()).containsEntry(REQUESTS_PER_MINUTE, 100L);
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void accountCeilingsBindAcrossPools(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.account(limits(REQUESTS_PER_MINUTE, 60))
			.model("a", limits(REQUESTS_PER_MINUTE, 600))
			.model("b", limits(REQUESTS_PER_MINUTE, 600))
			.engine(this.stores.open(store, this.clock), this.clock);
		acquire(engine, engine.pool("openai", "a"), new Demand(1, 1));
		acquire(engine, engine.pool("openai", "b"), new Demand(1, 1));
		Calls.Call third = acquire(engine, engine.pool("openai", "b"), new Demand(1, 1), null, Duration.ZERO);
		assertThat(third.error()).isInstanceOf(QuotaWaitTimeoutException.class)
			.hasMessageContaining("account requests-per-minute");
		engine.awaitQuiet();
		assertThat(engine.snapshot(engine.pool("openai", "a")).bucket(ACCOUNT, REQUESTS_PER_MINUTE).remaining())
			.isZero();
	}

	/** How the local store waits: a shared store books each call ahead instead. */
	@Test
	void waitersShareOneTimerPerAccount() {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("m", limits(REQUESTS_PER_MINUTE, 30))
			.engine(this.localStore, this.clock);
		Pool pool = engine.pool("openai", "m");
		acquire(engine, pool, new Demand(1, 1));
		for (int i = 0; i < 100; i++) {
			acquire(engine, pool, new Demand(1, 1));
		}
		// one lease timer for the admitted call, one wake-up timer for the
		// hundred waiters
		assertThat(this.clock.pendingTimers()).isEqualTo(2);
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void callersThatEndTheirCallOnAdmissionDrainALongQueueWithoutRecursion(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("m", limits(CONCURRENT_REQUESTS, 1))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		QuotaPermit first = acquire(engine, pool, new Demand(1, 1)).permit();
		java.util.concurrent.atomic.AtomicInteger admitted = new java.util.concurrent.atomic.AtomicInteger();
		for (int i = 0; i < 5_000; i++) {
			engine.acquire(pool, new Demand(1, 1), null, null).subscribe((permit) -> {
				admitted.incrementAndGet();
				permit.release();
			});
		}
		first.release();
		engine.awaitQuiet();
		assertThat(admitted.get()).isEqualTo(5_000);
		assertThat(inUse(engine, pool, CONCURRENT_REQUESTS)).isZero();
		engine.awaitQuiet();
		assertThat(engine.waiting(pool.account())).isZero();
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void callsBeyondTheBackfillWindowAreAdmittedWhenRoomAppearsForAll(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.burstWindow(Duration.ofSeconds(60))
			.maxWait(Duration.ofMinutes(5))
			.model("m", limits(REQUESTS_PER_MINUTE, 600))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		java.util.List<Calls.Call> calls = new java.util.ArrayList<>();
		for (int i = 0; i < 1_000; i++) {
			calls.add(acquire(engine, pool, new Demand(1, 1)));
		}
		assertThat(calls.stream().filter(Calls.Call::admitted)).hasSize(600);
		this.clock.advance(Duration.ofSeconds(40));
		assertThat(calls).allMatch(Calls.Call::admitted);
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void headersCorrectThePoolAndLearnItsLimitEvenWhereTheAccountHasOne(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.headroom(0.8)
			.account(limits(TOKENS_PER_MINUTE, 3_000_000))
			.model("gpt-4o", limits(REQUESTS_PER_MINUTE, 500))
			.model("o3", limits(REQUESTS_PER_MINUTE, 500))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool gpt = engine.pool("openai", "gpt-4o");
		engine.observe(gpt, java.util.List.of(new ServerLimit(TOKENS_PER_MINUTE, 30_000L, 0L, null)));
		assertThat(gpt.learned(TOKENS_PER_MINUTE)).isTrue();
		assertThat(remaining(engine, gpt, TOKENS_PER_MINUTE)).isEqualTo(-6_000);
		engine.awaitQuiet();
		assertThat(engine.snapshot(engine.pool("openai", "o3")).bucket(ACCOUNT, TOKENS_PER_MINUTE).remaining())
			.as("another model's calls are not blocked by this model's headers")
			.isEqualTo(80_000);
	}

	/**
	 * A learned limit follows the provider's latest report (a higher tier needs no
	 * restart) until an operator sets one, which stands, here and where another replica
	 * publishes the same value this process had learned.
	 */
	@Test
	void aLearnedLimitFollowsTheLatestReportUntilAnOperatorSetsOne() {
		QuotaEngine engine = TestConfigs.provider()
			.model("gpt-4o", limits(REQUESTS_PER_MINUTE, 500))
			.engine(this.stores.open(TestStores.Kind.LOCAL, this.clock), this.clock);
		Pool pool = engine.pool("openai", "gpt-4o");
		engine.observe(pool, java.util.List.of(new ServerLimit(TOKENS_PER_MINUTE, 30_000L, null, null)));
		engine.observe(pool, java.util.List.of(new ServerLimit(TOKENS_PER_MINUTE, 450_000L, null, null)));
		assertThat(pool.limits().asMap()).containsEntry(TOKENS_PER_MINUTE, 450_000L);
		assertThat(pool.learned(TOKENS_PER_MINUTE)).isTrue();
		engine.observe(pool, java.util.List.of(new ServerLimit(REQUESTS_PER_MINUTE, 10_000L, null, null)));
		assertThat(pool.limits().asMap()).as("a configured limit stands").containsEntry(REQUESTS_PER_MINUTE, 500L);
		engine.changeLimit("openai", "gpt-4o", TOKENS_PER_MINUTE, 100_000);
		assertThat(pool.learned(TOKENS_PER_MINUTE)).as("an operator's limit is not learned").isFalse();
		engine.observe(pool, java.util.List.of(new ServerLimit(TOKENS_PER_MINUTE, 800_000L, null, null)));
		assertThat(pool.limits().asMap()).containsEntry(TOKENS_PER_MINUTE, 100_000L);
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aLimitLearnedWhileCallsWaitAppliesToThem(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("m", limits(CONCURRENT_REQUESTS, 1))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		Calls.Call first = acquire(engine, pool, new Demand(1_000, 0));
		assertThat(first.admitted()).isTrue();
		java.util.List<Calls.Call> queued = new java.util.ArrayList<>();
		for (int i = 0; i < 4; i++) {
			queued.add(acquire(engine, pool, new Demand(1_000, 0)));
		}
		// 6,000 a minute with a 2 s window: a bucket of 200 tokens
		engine.observe(pool, java.util.List.of(new ServerLimit(TOKENS_PER_MINUTE, 6_000L, 6_000L, null)));
		first.permit().complete(new Usage(1_000, 0, 0));
		assertThat(queued.get(0).admitted()).as("an oversized call waits for a full bucket").isTrue();
		assertThat(remaining(engine, pool, TOKENS_PER_MINUTE)).isEqualTo(200 - 1_000);
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aRefundAfterMidnightIsNotTakenFromTheNewDay(TestStores.Kind store) {
		ManualClock late = new ManualClock(Instant.parse("2026-11-30T23:59:59Z"));
		QuotaEngine engine = TestConfigs.provider()
			.model("m", limits(TOKENS_PER_DAY, 100_000))
			.engine(this.stores.open(store, late), late);
		Pool pool = engine.pool("openai", "m");
		Calls.Call call = acquire(engine, pool, new Demand(10, 5_000));
		assertThat(call.admitted()).isTrue();
		late.advance(Duration.ofSeconds(2));
		acquire(engine, pool, new Demand(10, 0)).permit().complete(new Usage(10, 0, 0));
		call.permit().complete(new Usage(10, 0, 10));
		assertThat(remaining(engine, pool, TOKENS_PER_DAY)).as("the new day keeps its own charge")
			.isEqualTo(100_000 - 10);
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aSpentDayFailsFastEvenWhileAGateHoldsTheCall(TestStores.Kind store) {
		ManualClock evening = new ManualClock(Instant.parse("2026-11-30T20:00:00Z"));
		QuotaEngine engine = TestConfigs.provider()
			.model("m", limits(REQUESTS_PER_DAY, 1, CONCURRENT_REQUESTS, 1))
			.engine(this.stores.open(store, evening), evening);
		Pool pool = engine.pool("openai", "m");
		acquire(engine, pool, new Demand(1, 1));
		assertThat(acquire(engine, pool, new Demand(1, 1)).error()).isInstanceOf(BudgetExhaustedException.class);
	}

	private long remaining(QuotaEngine engine, Pool pool, Dimension dimension) {
		engine.awaitQuiet();
		return engine.snapshot(pool).bucket(POOL, dimension).remaining();
	}

	private long inUse(QuotaEngine engine, Pool pool, Dimension dimension) {
		engine.awaitQuiet();
		return engine.snapshot(pool).gate(POOL, dimension, false).inUse();
	}

}
