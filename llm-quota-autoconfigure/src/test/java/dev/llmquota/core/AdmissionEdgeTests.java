package dev.llmquota.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.llmquota.QuotaExhaustedException;
import dev.llmquota.QuotaWaitTimeoutException;
import dev.llmquota.core.kernel.Admission;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;

import static dev.llmquota.core.Calls.acquire;
import static dev.llmquota.core.Dimension.CONCURRENT_REQUESTS;
import static dev.llmquota.core.Dimension.REQUESTS_PER_MINUTE;
import static dev.llmquota.core.Dimension.TOKENS_PER_MINUTE;
import static dev.llmquota.core.TestConfigs.limits;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Calls at the edges of the queue, on both stores alike: one cancelled as it subscribes,
 * one that waits behind more calls than the shared store's backfill window, and calls
 * booked ahead in the shared store when the provider then says no.
 */
class AdmissionEdgeTests {

	private final ManualClock clock = new ManualClock();

	private final TestStores stores = new TestStores();

	@AfterEach
	void closeStores() {
		this.stores.close();
	}

	/**
	 * A subscriber that goes away as it subscribes (a request aborted as its call
	 * subscribes, a {@code subscribeOn} cancelled early): the call never reaches its
	 * caller, so it must take nothing and leave no trace in the queue.
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aCallCancelledAsItSubscribesTakesNothing(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.model("m", limits(CONCURRENT_REQUESTS, 1, TOKENS_PER_MINUTE, 60_000))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		engine.acquire(pool, new Demand(100, 0), null, null).subscribe(new BaseSubscriber<QuotaPermit>() {

			@Override
			protected void hookOnSubscribe(Subscription subscription) {
				cancel();
			}

		});
		engine.awaitQuiet();
		assertThat(engine.waiting(pool.account())).as("calls waiting").isZero();
		assertThat(engine.inFlight(pool.account())).as("calls in flight").isZero();
		Calls.Call next = acquire(engine, pool, new Demand(100, 0), null, Duration.ofSeconds(5));
		assertThat(next.admitted()).as("the next call finds the slot free").isTrue();
	}

	/**
	 * A call beyond the backfill window, behind calls that wait longer than it may, fails
	 * at its own deadline on either store.
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aCallBeyondTheBackfillWindowTimesOutAtItsDeadline(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("m", limits(CONCURRENT_REQUESTS, 1))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "m");
		assertThat(acquire(engine, pool, new Demand(1, 1)).admitted()).isTrue();
		List<Calls.Call> ahead = new ArrayList<>();
		for (int i = 0; i < Admission.BACKFILL_WINDOW; i++) {
			ahead.add(acquire(engine, pool, new Demand(1, 1), null, Duration.ofMinutes(1)));
		}
		Calls.Call impatient = acquire(engine, pool, new Demand(1, 1), null, Duration.ofSeconds(1));
		engine.awaitQuiet();
		assertThat(impatient.admitted()).isFalse();
		long timersBefore = this.clock.scheduledTimers();
		long nanosBefore = this.clock.nanoTime();
		try {
			// bounded: on a store where the deadline is missed, the advance never returns
			assertTimeoutPreemptively(Duration.ofSeconds(20), () -> this.clock.advance(Duration.ofSeconds(2)),
					"advancing the clock past the impatient call's deadline");
		}
		finally {
			System.out.println("DIAG timers scheduled during advance: " + (this.clock.scheduledTimers() - timersBefore)
					+ ", clock moved " + (this.clock.nanoTime() - nanosBefore) + " ns");
		}
		assertThat(impatient.error()).isInstanceOf(QuotaWaitTimeoutException.class);
	}

	/**
	 * A provider penalty holds every call of the pool until it ends, on either store:
	 * also a call that was already waiting for its turn when the 429 came.
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aPenaltyHoldsACallThatWasAlreadyWaitingForItsTurn(TestStores.Kind store) {
		QuotaEngine engine = oneCallAMinute(store);
		Pool pool = engine.pool("openai", "m");
		Calls.Call waiting = thirdCall(engine, pool, null);
		this.clock.advance(Duration.ofMillis(500));
		engine.rateLimited(pool, Dimension.REQUESTS_PER_MINUTE, Duration.ofSeconds(10));
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(waiting.admitted()).as("admitted 1 s into a 10 s penalty").isFalse();
		this.clock.advance(Duration.ofSeconds(9));
		assertThat(waiting.admitted()).as("admitted once the penalty ended").isTrue();
	}

	/**
	 * A quota the provider says is spent fails the calls of the pool fast, on either
	 * store: also a call that was already waiting for its turn when it was said.
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aSpentQuotaStopsACallThatWasAlreadyWaitingForItsTurn(TestStores.Kind store) {
		QuotaEngine engine = oneCallAMinute(store);
		Pool pool = engine.pool("openai", "m");
		Calls.Call waiting = thirdCall(engine, pool, null);
		this.clock.advance(Duration.ofMillis(500));
		engine.exhaust(pool, false, null, "insufficient_quota", this.clock.instant().plus(Duration.ofHours(1)));
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(waiting.admitted()).as("admitted with the quota spent for an hour").isFalse();
		assertThat(waiting.error()).isInstanceOf(QuotaExhaustedException.class);
	}

	/**
	 * A call booked ahead that a penalty then holds past its deadline leaves at its
	 * deadline, as a waiting call does, and gives back the account's in-flight slot: the
	 * call of another model waiting behind it for that slot goes then, not at its own
	 * deadline.
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aBookedAheadCallThatFailsAtItsStartLetsTheCallWaitingForItsSlotGo(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.account(limits(CONCURRENT_REQUESTS, 1))
			.model("a", limits(REQUESTS_PER_MINUTE, 60))
			.model("b", limits(REQUESTS_PER_MINUTE, 6_000))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool a = engine.pool("openai", "a");
		Pool b = engine.pool("openai", "b");
		for (int i = 0; i < 2; i++) {
			Calls.Call first = acquire(engine, a, new Demand(1, 1));
			assertThat(first.admitted()).isTrue();
			first.permit().complete(new Usage(1, 1, 0));
		}
		// a's bucket is empty: its next call waits for its turn (booked ahead on a
		// shared store), holding the account's one in-flight slot on a shared store
		Calls.Call booked = acquire(engine, a, new Demand(1, 1), null, Duration.ofSeconds(5));
		Calls.Call other = acquire(engine, b, new Demand(1, 1), null, Duration.ofSeconds(30));
		engine.awaitQuiet();
		// a 429 on model a for a minute: a's call cannot start before its deadline
		engine.rateLimited(a, REQUESTS_PER_MINUTE, Duration.ofSeconds(60));
		this.clock.advance(Duration.ofSeconds(2));
		assertThat(booked.admitted()).isFalse();
		this.clock.advance(Duration.ofSeconds(4));
		assertThat(booked.error()).isInstanceOf(QuotaWaitTimeoutException.class);
		assertThat(other.error()).as("model b's call failed").isNull();
		assertThat(other.admitted()).as("model b's call, free of the penalty, has the account's slot").isTrue();
	}

	/**
	 * A call held by a 429's penalty past its deadline times out naming the penalty and
	 * when it ends (a 429's Retry-After for the caller), on either store: also one that
	 * was booked ahead when the 429 came.
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aCallAPenaltyOutlastsTimesOutNamingThePenaltyAndItsEnd(TestStores.Kind store) {
		QuotaEngine engine = oneCallAMinute(store);
		Pool a = engine.pool("openai", "m");
		Calls.Call waiting = thirdCall(engine, a, Duration.ofSeconds(5));
		engine.rateLimited(a, Dimension.TOKENS_PER_MINUTE, Duration.ofSeconds(60));
		this.clock.advance(Duration.ofSeconds(6));
		assertThat(waiting.error()).isInstanceOf(QuotaWaitTimeoutException.class);
		QuotaWaitTimeoutException timeout = (QuotaWaitTimeoutException) waiting.error();
		assertThat(timeout.getWaited()).as("waited its max-wait").isEqualTo(Duration.ofSeconds(5));
		assertThat(timeout.getDimension()).as("the dimension named").isEqualTo("tokens-per-minute");
		assertThat(timeout.getRetryAfter()).as("Retry-After: the penalty's end").isNotNull();
	}

	/** A pool of 60 calls a minute over the default 2 s window: a bucket of two. */
	private QuotaEngine oneCallAMinute(TestStores.Kind store) {
		return TestConfigs.provider()
			.inFlightGate(false)
			.model("m", limits(REQUESTS_PER_MINUTE, 60))
			.engine(this.stores.open(store, this.clock), this.clock);
	}

	/**
	 * Two calls take the bucket; the third waits for its turn (booked ahead on Redis).
	 */
	private static Calls.Call thirdCall(QuotaEngine engine, Pool pool, Duration maxWait) {
		assertThat(acquire(engine, pool, new Demand(1, 1)).admitted()).isTrue();
		assertThat(acquire(engine, pool, new Demand(1, 1)).admitted()).isTrue();
		Calls.Call waiting = (maxWait != null) ? acquire(engine, pool, new Demand(1, 1), null, maxWait)
				: acquire(engine, pool, new Demand(1, 1));
		engine.awaitQuiet();
		return waiting;
	}

}
