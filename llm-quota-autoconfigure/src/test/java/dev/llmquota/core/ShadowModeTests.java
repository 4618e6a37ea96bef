package dev.llmquota.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import dev.llmquota.QuotaWaitTimeoutException;
import dev.llmquota.store.LocalQuotaStore;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.BaseSubscriber;

import static dev.llmquota.core.Dimension.REQUESTS_PER_MINUTE;
import static dev.llmquota.core.Dimension.TOKENS_PER_MINUTE;
import static dev.llmquota.core.TestConfigs.limits;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Shadow mode against enforce mode on one workload and one manual clock: calls arrive
 * four a second for three seconds, each takes 700 ms whenever it is sent, and the pool
 * admits one a second. Enforce mode makes them wait, and refuses those that would wait
 * past {@code max-wait}; shadow mode sends every call at once and reports exactly those
 * waits and refusals.
 */
class ShadowModeTests {

	private static final Duration ARRIVALS = Duration.ofMillis(250);

	private static final int CALLS = 12;

	private static final Duration LATENCY = Duration.ofMillis(700);

	private static final Demand DEMAND = new Demand(50, 100);

	private static final Usage USAGE = new Usage(50, 0, 30);

	@Test
	void shadowModeReportsExactlyTheWaitsAndRefusalsOfEnforceModeWhileDelayingNothing() {
		Outcomes enforced = run(Mode.ENFORCE);
		Outcomes shadowed = run(Mode.SHADOW);
		assertThat(enforced.waits).as("enforce mode made calls wait")
			.anySatisfy((wait) -> assertThat(wait).isPositive());
		assertThat(enforced.refusals).as("and refused some").isNotEmpty();
		assertThat(shadowed.callerWaits).as("shadow mode delays nothing").containsOnly(0L);
		assertThat(shadowed.callerFailures).as("and refuses nothing").isEmpty();
		assertThat(shadowed.waits).as("the waits it reports").containsExactlyElementsOf(enforced.waits);
		assertThat(shadowed.refusals).as("the refusals it reports").containsExactlyElementsOf(enforced.refusals);
		assertThat(shadowed.stats.calls()).isEqualTo(enforced.waits.size());
		assertThat(shadowed.stats.delayed()).isEqualTo(enforced.waits.stream().filter((wait) -> wait > 0).count());
		assertThat(shadowed.stats.maxDelayNanos()).isEqualTo(Collections.max(enforced.waits));
		assertThat(shadowed.stats.refused()).isEqualTo(enforced.refusals.size());
	}

	/**
	 * A call admitted and then not sent (its caller gave up) is given back whole in
	 * enforce mode; shadow mode's books do the same, and a twin still waiting stops
	 * waiting rather than being admitted and charged later.
	 */
	@Test
	void aCallNeverSentIsGivenBackInShadowModeAsInEnforceMode() {
		for (Mode mode : Mode.values()) {
			if (mode == Mode.OFF) {
				continue;
			}
			ManualClock clock = new ManualClock();
			QuotaEngine engine = TestConfigs.provider()
				.mode(mode)
				.headroom(1.0)
				.burstWindow(Duration.ofMinutes(1))
				.inFlightGate(false)
				.maxWait(Duration.ofSeconds(30))
				.model("gpt-4o", limits(REQUESTS_PER_MINUTE, 600, TOKENS_PER_MINUTE, 4_000))
				.engine(new LocalQuotaStore(), clock);
			Pool pool = engine.pool("openai", "gpt-4o");
			Calls.Call call = Calls.acquire(engine, pool, new Demand(1_000, 2_000));
			assertThat(call.admitted()).as(mode.name()).isTrue();
			call.permit().cancel();
			Calls.settle(engine);
			assertThat(engine.snapshot(pool).bucket(BucketSpec.Scope.POOL, TOKENS_PER_MINUTE).remaining())
				.as("%s: the unsent call given back whole", mode)
				.isEqualTo(4_000);
			// a call whose twin must wait (the bucket holds one such call), not sent
			// either
			Calls.Call first = Calls.acquire(engine, pool, new Demand(1_000, 2_000));
			if (mode == Mode.SHADOW) {
				Calls.Call second = Calls.acquire(engine, pool, new Demand(1_000, 2_000));
				Calls.settle(engine);
				assertThat(second.admitted()).as("shadow mode delays nothing").isTrue();
				assertThat(engine.waiting(pool.account())).as("its twin waits").isEqualTo(1);
				second.permit().cancel();
				assertThat(engine.waiting(pool.account())).as("its twin stops waiting").isZero();
			}
			first.permit().complete(new Usage(1_000, 0, 2_000));
			clock.advance(Duration.ofMinutes(1));
			Calls.settle(engine);
			assertThat(engine.snapshot(pool).bucket(BucketSpec.Scope.POOL, TOKENS_PER_MINUTE).remaining())
				.as("%s: nothing charged for the call never sent", mode)
				.isEqualTo(4_000);
			engine.close();
		}
	}

	@Test
	void offModeLeavesTheBooksUntouched() {
		ManualClock clock = new ManualClock();
		QuotaEngine engine = TestConfigs.provider()
			.mode(Mode.OFF)
			.model("gpt-4o", limits(REQUESTS_PER_MINUTE, 1))
			.engine(new LocalQuotaStore(), clock);
		Pool pool = engine.pool("openai", "gpt-4o");
		for (int i = 0; i < 5; i++) {
			Calls.Call call = Calls.acquire(engine, pool, DEMAND);
			assertThat(call.admitted()).isTrue();
			call.permit().complete(USAGE);
		}
		assertThat(engine.snapshot(pool).buckets().get(0).remaining()).isEqualTo(1);
		assertThat(engine.inFlight(pool.account())).isZero();
	}

	private static Outcomes run(Mode mode) {
		ManualClock clock = new ManualClock();
		QuotaEngine engine = TestConfigs.provider()
			.mode(mode)
			.maxWait(Duration.ofSeconds(4))
			.inFlightGate(false)
			.model("gpt-4o", limits(REQUESTS_PER_MINUTE, 60, TOKENS_PER_MINUTE, 60_000))
			.engine(new LocalQuotaStore(), clock);
		Pool pool = engine.pool("openai", "gpt-4o");
		Outcomes outcomes = new Outcomes();
		engine.addListener(new QuotaEvents() {

			@Override
			public void shadowed(Pool shadowedPool, long wouldHaveWaitedNanos) {
				outcomes.waits.add(wouldHaveWaitedNanos);
			}

			@Override
			public void shadowRefused(Pool shadowedPool, Throwable refusal) {
				outcomes.refusals.add(refusal.getClass().getSimpleName());
			}

		});
		for (int i = 0; i < CALLS; i++) {
			long arrival = clock.nanoTime();
			engine.acquire(pool, DEMAND, null, null).subscribe((permit) -> {
				long waited = clock.nanoTime() - arrival;
				if (mode == Mode.ENFORCE) {
					outcomes.waits.add(waited);
				}
				outcomes.callerWaits.add(waited);
				// the call takes as long whenever it is sent
				clock.schedule(LATENCY.toNanos(), () -> permit.complete(USAGE));
			}, (error) -> {
				if (mode == Mode.ENFORCE) {
					outcomes.refusals.add(error.getClass().getSimpleName());
				}
				outcomes.callerFailures.add(error);
			});
			clock.advance(ARRIVALS);
		}
		clock.advance(Duration.ofSeconds(30));
		outcomes.stats = pool.stats().shadow();
		Collections.sort(outcomes.waits);
		Collections.sort(outcomes.refusals);
		assertThat(outcomes.refusals)
			.allSatisfy((refusal) -> assertThat(refusal).isEqualTo(QuotaWaitTimeoutException.class.getSimpleName()));
		return outcomes;
	}

	private static final class Outcomes {

		final List<Long> waits = new ArrayList<>();

		final List<String> refusals = new ArrayList<>();

		final List<Long> callerWaits = new ArrayList<>();

		final List<Throwable> callerFailures = new ArrayList<>();

		PoolStats.Shadow stats;

	}

	/**
	 * A caller that gives up while its shadow permit is made (a timeout on another
	 * thread) never gets it, and its twin gives back its slot rather than holding it to
	 * the lease, where it would make the shadow report hold back calls enforce mode would
	 * not have.
	 */
	@Test
	void aShadowPermitWhoseCallerGaveUpAsItWasMadeGivesItsTwinsSlotBack() {
		QuotaEngine engine = TestConfigs.provider()
			.headroom(1.0)
			.mode(Mode.SHADOW)
			.model("gpt-4o", limits(TOKENS_PER_MINUTE, 1_000))
			.engine(new LocalQuotaStore(), new ManualClock());
		Pool pool = engine.pool("openai", "gpt-4o");
		AtomicReference<QuotaPermit> received = new AtomicReference<>();
		BaseSubscriber<QuotaPermit> caller = new BaseSubscriber<>() {

			@Override
			protected void hookOnNext(QuotaPermit permit) {
				received.set(permit);
			}

		};
		engine.addListener(new QuotaEvents() {

			@Override
			public void shadowed(Pool shadowed, long wouldHaveWaitedNanos) {
				// the caller gives up in this instant
				caller.cancel();
			}

		});
		engine.acquire(pool, new Demand(100, 100), null, Duration.ofSeconds(30)).subscribe(caller);
		assertThat(received.get()).as("the permit never reached its caller").isNull();
		assertThat(engine.inFlight(pool.account())).as("the twin's slot").isZero();
	}

}
