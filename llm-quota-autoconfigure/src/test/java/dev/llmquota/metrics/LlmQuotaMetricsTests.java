package dev.llmquota.metrics;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.llmquota.core.Accounting;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.Calls;
import dev.llmquota.core.Cost;
import dev.llmquota.core.Demand;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.ManualClock;
import dev.llmquota.core.Mode;
import dev.llmquota.core.Pool;
import dev.llmquota.core.Priority;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.core.TestConfigs;
import dev.llmquota.core.Usage;
import dev.llmquota.store.LocalQuotaStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static dev.llmquota.core.Dimension.REQUESTS_PER_MINUTE;
import static dev.llmquota.core.Dimension.TOKENS_PER_MINUTE;
import static dev.llmquota.core.TestConfigs.limits;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Meter values after known traffic.
 */
class LlmQuotaMetricsTests {

	private final ManualClock clock = new ManualClock();

	private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	private QuotaEngine engine(int maxPools) {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.maxPools(maxPools)
			.burstWindow(Duration.ofSeconds(60))
			.model("gpt-4o", limits(REQUESTS_PER_MINUTE, 500, TOKENS_PER_MINUTE, 30_000))
			.template(limits(REQUESTS_PER_MINUTE, 100))
			.engine(new LocalQuotaStore(), this.clock);
		new LlmQuotaMetrics(engine).bindTo(this.registry);
		return engine;
	}

	@Test
	void gaugesShowLimitRemainingAndCallsInFlight() {
		QuotaEngine engine = engine(10);
		Pool pool = engine.pool("openai", "gpt-4o");
		Calls.Call call = Calls.acquire(engine, pool, new Demand(1_000, 200));
		assertThat(gauge(LlmQuotaMetrics.LIMIT, Dimension.TOKENS_PER_MINUTE, "local", false)).isEqualTo(30_000);
		assertThat(gauge(LlmQuotaMetrics.REMAINING, Dimension.TOKENS_PER_MINUTE, "local", true))
			.isEqualTo(30_000 - 1_200);
		assertThat(this.registry.get(LlmQuotaMetrics.IN_FLIGHT).tag("model", "gpt-4o").gauge().value()).isEqualTo(1);
		call.permit().complete(new Usage(1_000, 0, 50));
		assertThat(gauge(LlmQuotaMetrics.REMAINING, Dimension.TOKENS_PER_MINUTE, "local", true))
			.isEqualTo(30_000 - 1_050);
		assertThat(this.registry.get(LlmQuotaMetrics.IN_FLIGHT).tag("model", "gpt-4o").gauge().value()).isZero();
	}

	/**
	 * An account limit an operator sets at run time, where none was configured, gets its
	 * gauges at once, on every pool of the account, as the endpoint shows it.
	 */
	@Test
	void anAccountLimitSetAtRunTimeGetsItsGauges() {
		QuotaEngine engine = engine(10);
		engine.pool("openai", "gpt-4o");
		engine.pool("openai", "gpt-4o-mini");
		engine.changeLimit("openai", null, TOKENS_PER_MINUTE, 90_000);
		for (String model : List.of("gpt-4o", "gpt-4o-mini")) {
			assertThat(this.registry.get(LlmQuotaMetrics.LIMIT)
				.tags("model", model, "scope", "account", "dimension", "tokens-per-minute")
				.gauge()
				.value()).isEqualTo(90_000);
			assertThat(this.registry.get(LlmQuotaMetrics.REMAINING)
				.tags("model", model, "scope", "account", "dimension", "tokens-per-minute", "source", "local")
				.gauge()
				.value()).isEqualTo(90_000);
		}
		engine.changeLimit("openai", null, TOKENS_PER_MINUTE, 60_000);
		assertThat(this.registry.find(LlmQuotaMetrics.LIMIT)
			.tags("model", "gpt-4o", "scope", "account", "dimension", "tokens-per-minute")
			.gauges()).singleElement().extracting((gauge) -> gauge.value()).isEqualTo(60_000.0);
	}

	/**
	 * {@code llm.quota.spend} counts what the budget was charged: a call's cost from its
	 * usage, and what it reserved where its usage is only estimated (a stream that ended
	 * without it) or unknown.
	 */
	@Test
	void spendCountsWhatTheBudgetWasCharged() {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.accounting(new Accounting(true, true, true, 1, new Cost(10, 30, 10)))
			.account(limits(Dimension.BUDGET_PER_DAY, 10_000_000))
			.model("gpt-4o", limits())
			.engine(new LocalQuotaStore(), this.clock);
		new LlmQuotaMetrics(engine).bindTo(this.registry);
		Pool pool = engine.pool("openai", "gpt-4o");
		// each reserves 1,000 x 10 + 10,000 x 30 = 310,000 millionths
		Calls.acquire(engine, pool, new Demand(1_000, 10_000)).permit().complete(new Usage(1_000, 0, 100));
		Calls.Call estimated = Calls.acquire(engine, pool, new Demand(1_000, 10_000));
		estimated.permit().reconcileEstimated(new Usage(1_000, 0, 5));
		estimated.permit().complete(null);
		Calls.acquire(engine, pool, new Demand(1_000, 10_000)).permit().complete(null);
		long charged = 10_000_000
				- engine.snapshot(pool).bucket(BucketSpec.Scope.ACCOUNT, Dimension.BUDGET_PER_DAY).remaining();
		assertThat(charged).isEqualTo(13_000 + 310_000 + 310_000);
		assertThat(this.registry.get(LlmQuotaMetrics.SPEND).counter().count()).isEqualTo(charged / 1e6);
	}

	@Test
	void remainingIsInTheProvidersTermsConcurrencyIncludedAndBudgetsInTheCurrency() {
		QuotaEngine engine = TestConfigs.provider()
			.headroom(0.8)
			.inFlightGate(false)
			.account(limits(Dimension.BUDGET_PER_DAY, 50_000_000))
			.model("gpt-4o",
					limits(REQUESTS_PER_MINUTE, 500, TOKENS_PER_MINUTE, 30_000, Dimension.CONCURRENT_REQUESTS, 10))
			.engine(new LocalQuotaStore(), this.clock);
		new LlmQuotaMetrics(engine).bindTo(this.registry);
		Pool pool = engine.pool("openai", "gpt-4o");
		// an idle pool shows the whole published limit, as the provider's headers would
		assertThat(gauge(LlmQuotaMetrics.REMAINING, TOKENS_PER_MINUTE, "local", true)).isEqualTo(30_000);
		assertThat(gauge(LlmQuotaMetrics.REMAINING, Dimension.CONCURRENT_REQUESTS, "local", true)).isEqualTo(10);
		assertThat(gauge(LlmQuotaMetrics.LIMIT, Dimension.CONCURRENT_REQUESTS, "local", false)).isEqualTo(10);
		Calls.Call call = Calls.acquire(engine, pool, new Demand(200, 200));
		// the bucket holds 800 (2 s of 24,000 a minute): 400 left are 15,000 of the
		// 30,000
		assertThat(gauge(LlmQuotaMetrics.REMAINING, TOKENS_PER_MINUTE, "local", true)).isEqualTo(15_000);
		// one of 8 enforced slots taken: 7 / 8 of the published 10
		assertThat(gauge(LlmQuotaMetrics.REMAINING, Dimension.CONCURRENT_REQUESTS, "local", true)).isEqualTo(8);
		assertThat(this.registry.get(LlmQuotaMetrics.LIMIT)
			.tags("model", "gpt-4o", "scope", "account", "dimension", "budget-per-day")
			.gauge()
			.value()).isEqualTo(50.0);
		call.permit().complete(new Usage(200, 0, 10));
	}

	@Test
	void waitsDriftAndOutputAreCounted() {
		QuotaEngine engine = engine(10);
		Pool pool = engine.pool("openai", "gpt-4o");
		Calls.acquire(engine, pool, new Demand(100, 200), Priority.BATCH, null)
			.permit()
			.complete(new Usage(100, 0, 20));
		engine.recordDrift(pool, 100, 120);
		assertThat(this.registry.get(LlmQuotaMetrics.WAIT).tag("priority", "BATCH").timer().count()).isEqualTo(1);
		assertThat(this.registry.get(LlmQuotaMetrics.OUTPUT_RESERVED).counter().count()).isEqualTo(200);
		assertThat(this.registry.get(LlmQuotaMetrics.OUTPUT_BILLED).counter().count()).isEqualTo(20);
		assertThat(this.registry.get(LlmQuotaMetrics.DRIFT).summary().mean()).isEqualTo(1.2);
	}

	@Test
	void meterNamesAndTagsAreThoseOfTheContract() {
		QuotaEngine engine = engine(10);
		engine.pool("openai", "gpt-4o");
		assertThat(this.registry.get(LlmQuotaMetrics.LIMIT)
			.tags("provider", "openai", "region", "us", "model", "gpt-4o", "scope", "pool", "dimension",
					"requests-per-minute")
			.gauge()
			.getId()
			.getDescription()).isNotBlank();
		assertThat(this.registry.get(LlmQuotaMetrics.LIMIT).gauge().getId().getBaseUnit()).isNotBlank();
	}

	@Test
	void gaugesOfAPoolSurviveGarbageCollectionAndGoWhenItIsEvicted() {
		QuotaEngine engine = engine(1);
		WeakReference<Pool> unlisted = new WeakReference<>(engine.pool("openai", "o3"));
		Calls.acquire(engine, unlisted.get(), new Demand(1, 1)).permit().complete(new Usage(1, 0, 1));
		System.gc();
		assertThat(this.registry.find(LlmQuotaMetrics.LIMIT)
			.tags("model", "o3", "scope", "pool", "dimension", "requests-per-minute")
			.gauge()
			.value()).isEqualTo(100);
		engine.pool("openai", "o4");
		assertThat(this.registry.find(LlmQuotaMetrics.LIMIT).tag("model", "o3").gauges()).isEmpty();
		assertThat(this.registry.find(LlmQuotaMetrics.WAIT).tag("model", "o3").meters()).isEmpty();
		assertThat(this.registry.find(LlmQuotaMetrics.OUTPUT_BILLED).tag("model", "o3").meters()).isEmpty();
		assertThat(this.registry.find(LlmQuotaMetrics.WAITING).tag("model", "o3").meters()).isEmpty();
		assertThat(this.registry.find(LlmQuotaMetrics.LIMIT).tag("model", "o4").gauges()).isNotEmpty();
		assertThat(unlisted.get()).isNotNull();
	}

	@Test
	void aClosedBinderRecordsNothingMoreAndAWholeRegistryKeepsOneSetOfMeters() {
		QuotaEngine engine = engine(10);
		Pool pool = engine.pool("openai", "gpt-4o");
		Calls.acquire(engine, pool, new Demand(100, 200)).permit().complete(new Usage(100, 0, 20));
		SimpleMeterRegistry other = new SimpleMeterRegistry();
		LlmQuotaMetrics metrics = new LlmQuotaMetrics(engine);
		metrics.bindTo(other);
		Calls.acquire(engine, pool, new Demand(100, 200)).permit().complete(new Usage(100, 0, 20));
		assertThat(other.get(LlmQuotaMetrics.WAIT).timer().count()).isEqualTo(1);
		assertThat(other.get(LlmQuotaMetrics.LIMIT).tag("model", "gpt-4o").gauges()).isNotEmpty();
		metrics.close();
		Calls.acquire(engine, pool, new Demand(100, 200)).permit().complete(new Usage(100, 0, 20));
		engine.pool("openai", "o3");
		assertThat(other.get(LlmQuotaMetrics.WAIT).timer().count()).as("nothing recorded once closed").isEqualTo(1);
		assertThat(other.get(LlmQuotaMetrics.OUTPUT_BILLED).counter().count()).isEqualTo(20);
		assertThat(other.find(LlmQuotaMetrics.LIMIT).tag("model", "o3").gauges()).isEmpty();
		assertThat(this.registry.get(LlmQuotaMetrics.WAIT).timer().count()).as("the binder still open records")
			.isEqualTo(3);
		assertThat(this.registry.find(LlmQuotaMetrics.LIMIT).tag("model", "o3").gauges()).isNotEmpty();
	}

	private double gauge(String name, Dimension dimension, String source, boolean remaining) {
		var search = this.registry.get(name)
			.tag("model", "gpt-4o")
			.tag("scope", "pool")
			.tag("dimension", dimension.id());
		return (remaining ? search.tag("source", source) : search).gauge().value();
	}

	/**
	 * Shadow mode delays nothing: the waits its twins had, what enforce mode would have
	 * done, show under the shadow meters and nowhere else.
	 */
	@Test
	void inShadowModeTheWaitMetersShowTheWaitsCallersHad() {
		QuotaEngine engine = TestConfigs.provider()
			.mode(Mode.SHADOW)
			.inFlightGate(false)
			.model("gpt-4o", limits(REQUESTS_PER_MINUTE, 60))
			.engine(new LocalQuotaStore(), this.clock);
		new LlmQuotaMetrics(engine).bindTo(this.registry);
		Pool pool = engine.pool("openai", "gpt-4o");
		List<Long> callerWaits = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			long asked = this.clock.nanoTime();
			engine.acquire(pool, new Demand(10, 10), null, null).subscribe((permit) -> {
				callerWaits.add(this.clock.nanoTime() - asked);
				permit.complete(new Usage(10, 0, 10));
			});
		}
		assertThat(engine.waiting(pool, Priority.INTERACTIVE)).as("no caller waits").isZero();
		this.clock.advance(Duration.ofSeconds(10));
		assertThat(callerWaits).as("shadow mode delays nothing").containsExactly(0L, 0L, 0L, 0L);
		assertThat(this.registry.get(LlmQuotaMetrics.SHADOW_WAIT).timer().max(TimeUnit.MILLISECONDS))
			.as("what enforce mode would have done")
			.isGreaterThan(0);
		assertThat(this.registry.find(LlmQuotaMetrics.WAIT).timers()).as("llm.quota.wait: no call was admitted late")
			.allSatisfy((timer) -> assertThat(timer.max(TimeUnit.MILLISECONDS)).isZero());
		assertThat(pool.stats().waits(Priority.INTERACTIVE).maxWaitNanos()).as("the endpoint's priority block")
			.isZero();
	}

}
