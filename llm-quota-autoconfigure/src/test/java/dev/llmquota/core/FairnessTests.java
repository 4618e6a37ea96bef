package dev.llmquota.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static dev.llmquota.core.Calls.acquire;
import static dev.llmquota.core.Dimension.CONCURRENT_REQUESTS;
import static dev.llmquota.core.Dimension.REQUESTS_PER_MINUTE;
import static dev.llmquota.core.Dimension.TOKENS_PER_MINUTE;
import static dev.llmquota.core.TestConfigs.limits;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A large call is never starved by a stream of small ones, and small ones use what the
 * large one cannot use yet.
 */
class FairnessTests {

	private final ManualClock clock = new ManualClock();

	private final TestStores stores = new TestStores();

	@AfterEach
	void closeStores() {
		this.stores.close();
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aLargeCallBehindAStreamOfSmallOnesIsAdmittedWhenItsBucketHasRefilled(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("m", limits(TOKENS_PER_MINUTE, 30_000))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		// capacity 1,000 tokens refilled at 500 per second
		acquire(engine, pool, new Demand(1_000, 0));
		Calls.Call large = acquire(engine, pool, new Demand(900, 0));
		List<Calls.Call> small = new ArrayList<>();
		for (int tick = 0; tick < 40; tick++) {
			small.add(acquire(engine, pool, new Demand(20, 0)));
			this.clock.advance(Duration.ofMillis(50));
		}
		// 900 tokens at 500 per second: 1.8 s, undelayed by the small calls
		// that arrived meanwhile
		assertThat(large.admitted()).isTrue();
		assertThat(large.waited()).isEqualTo(Duration.ofMillis(1_800));
		assertThat(small.get(0).admittedAt).isGreaterThanOrEqualTo(large.admittedAt);
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void smallCallsOfAnotherPoolUseAccountCapacityTheWaitingLargeCallCannotUseYet(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.burstWindow(Duration.ofSeconds(10))
			.account(limits(REQUESTS_PER_MINUTE, 600))
			.model("large", limits(TOKENS_PER_MINUTE, 60_000))
			.model("small", limits(TOKENS_PER_MINUTE, 600_000))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool large = engine.pool("openai", "large");
		Pool small = engine.pool("openai", "small");
		// the large pool's bucket holds 10,000 tokens refilled at 1,000 per second
		acquire(engine, large, new Demand(10_000, 0));
		Calls.Call waiting = acquire(engine, large, new Demand(5_000, 0));
		List<Calls.Call> others = new ArrayList<>();
		for (int i = 0; i < 50; i++) {
			others.add(acquire(engine, small, new Demand(100, 0)));
		}
		assertThat(waiting.admitted()).isFalse();
		assertThat(others).as("the shared account bucket has room the large call does not need yet")
			.allMatch(Calls.Call::admitted);
		this.clock.advance(Duration.ofSeconds(5));
		assertThat(waiting.admitted()).isTrue();
		assertThat(waiting.waited()).isEqualTo(Duration.ofSeconds(5));
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aSmallCallMayNotTakeAccountRoomThatWouldDelayTheWaitingHead(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.burstWindow(Duration.ofSeconds(60))
			.account(limits(REQUESTS_PER_MINUTE, 3))
			.model("large", limits(TOKENS_PER_MINUTE, 60))
			.model("small", limits(TOKENS_PER_MINUTE, 600_000))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool large = engine.pool("openai", "large");
		Pool small = engine.pool("openai", "small");
		acquire(engine, large, new Demand(60, 0));
		acquire(engine, small, new Demand(1, 0));
		// one account request left; the large call needs its own bucket to refill first
		// (1 s)
		Calls.Call head = acquire(engine, large, new Demand(1, 0));
		Calls.Call later = acquire(engine, small, new Demand(1, 0));
		assertThat(later.admitted()).as("taking the last account request would delay the head").isFalse();
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(head.admitted()).isTrue();
		assertThat(later.admitted()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aCallWaitingOnAGateKeepsItsTurnAgainstSmallerCallsOfThePool(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.model("m", limits(CONCURRENT_REQUESTS, 2))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		Calls.Call a = acquire(engine, pool, new Demand(1, 1));
		acquire(engine, pool, new Demand(1, 1));
		Calls.Call head = acquire(engine, pool, new Demand(1, 1));
		Calls.Call next = acquire(engine, pool, new Demand(1, 1));
		a.permit().release();
		assertThat(head.admitted()).isTrue();
		assertThat(next.admitted()).isFalse();
	}

	/**
	 * A large call the in-flight bound holds back keeps its turn: a later small call that
	 * fits the bound now would take room the large call needs, so it waits too, on either
	 * store.
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aLargeCallHeldByAnInFlightBoundIsNotPassedByLaterSmallCalls(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.burstWindow(Duration.ofSeconds(60))
			.model("m", limits(TOKENS_PER_MINUTE, 1_000_000))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		// in-flight bound: 1,000,000 / 60 x 1.4 = 23,333 tokens
		Calls.Call running = acquire(engine, pool, new Demand(10_000, 0));
		Calls.Call large = acquire(engine, pool, new Demand(20_000, 0));
		Calls.Call small = acquire(engine, pool, new Demand(5_000, 0));
		assertThat(large.admitted()).as("20,000 do not fit beside 10,000 in flight").isFalse();
		assertThat(small.admitted()).as("5,000 fit, but would hold the waiting large call back").isFalse();
		running.permit().complete(new Usage(10_000, 0, 0));
		assertThat(large.admitted()).isTrue();
	}

	/**
	 * The first waiting call of each class keeps its turn: an interactive call waiting on
	 * another pool does not leave the first waiting batch call to be pushed back by
	 * later, smaller batch calls until its max-wait.
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void theFirstWaitingBatchCallKeepsItsTurnWhileAnInteractiveCallWaits(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			// chat: a bucket of 2 requests refilled at 1 a second
			.model("chat", limits(REQUESTS_PER_MINUTE, 60))
			// nightly: a bucket of 2,000 tokens refilled at 1,000 a second
			.model("nightly", limits(TOKENS_PER_MINUTE, 60_000), Priority.BATCH)
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool chat = engine.pool("openai", "chat");
		Pool nightly = engine.pool("openai", "nightly");
		acquire(engine, chat, new Demand(1, 0));
		acquire(engine, chat, new Demand(1, 0));
		assertThat(acquire(engine, nightly, new Demand(1_500, 0)).admitted()).isTrue();
		Calls.Call large = acquire(engine, nightly, new Demand(1_800, 0), null, Duration.ofSeconds(20));
		List<Calls.Call> small = new ArrayList<>();
		for (int tick = 0; tick < 150 && !large.admitted(); tick++) {
			if (tick % 5 == 0) {
				// interactive calls keep waiting on chat's bucket
				acquire(engine, chat, new Demand(1, 0));
			}
			small.add(acquire(engine, nightly, new Demand(100, 0)));
			this.clock.advance(Duration.ofMillis(100));
		}
		assertThat(large.error()).as("starved until its max-wait").isNull();
		assertThat(large.admitted()).isTrue();
		// 1,800 tokens, 500 left after the first call, at 1,000 a second: 1.3 s; the
		// interactive reserve of a batch call (0.2 of 2,000) while interactive calls wait
		// adds 0.4 s
		assertThat(large.waited()).as("undelayed by the later small calls")
			.isLessThanOrEqualTo(Duration.ofMillis(1_800));
		assertThat(small).allSatisfy((call) -> assertThat(call.error()).isNull());
	}

	/**
	 * A batch call of another pool, which takes nothing the first waiting batch call
	 * needs, is not held behind it, whether a full in-flight bound or its buckets hold
	 * that call back, an interactive call waiting or not.
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aBatchCallOfAnotherPoolIsNotHeldBehindTheFirstWaitingBatchCall(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.burstWindow(Duration.ofSeconds(60))
			.maxWait(Duration.ofSeconds(60))
			.model("chat", limits(REQUESTS_PER_MINUTE, 2))
			.model("nightly", limits(TOKENS_PER_MINUTE, 1_000), Priority.BATCH)
			.model("capped", limits(CONCURRENT_REQUESTS, 1, TOKENS_PER_MINUTE, 1_000), Priority.BATCH)
			.model("other", limits(TOKENS_PER_MINUTE, 600_000), Priority.BATCH)
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool chat = engine.pool("openai", "chat");
		Pool nightly = engine.pool("openai", "nightly");
		Pool capped = engine.pool("openai", "capped");
		Pool other = engine.pool("openai", "other");
		// nightly's tokens come back in 30 s
		Calls.Call running = acquire(engine, nightly, new Demand(1_000, 0));
		Calls.Call refused = acquire(engine, nightly, new Demand(500, 0));
		assertThat(refused.admitted()).isFalse();
		assertThat(acquire(engine, other, new Demand(100, 0)).admitted()).as("behind a call its buckets hold back")
			.isTrue();
		running.permit().complete(new Usage(1_000, 0, 0));
		this.clock.advance(Duration.ofSeconds(30));
		assertThat(refused.admitted()).isTrue();
		// an interactive call waits, and capped's in-flight bound holds its next call
		acquire(engine, chat, new Demand(1, 0));
		acquire(engine, chat, new Demand(1, 0));
		assertThat(acquire(engine, chat, new Demand(1, 0)).admitted()).as("chat's bucket is empty").isFalse();
		assertThat(acquire(engine, capped, new Demand(900, 0)).admitted()).isTrue();
		Calls.Call gated = acquire(engine, capped, new Demand(500, 0));
		assertThat(gated.admitted()).as("capped's in-flight bound is full").isFalse();
		assertThat(acquire(engine, other, new Demand(100, 0)).admitted()).as("behind a call its bound holds back")
			.isTrue();
	}

}
