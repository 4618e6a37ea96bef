package dev.llmquota.metrics;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import dev.llmquota.core.Demand;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.Pool;
import dev.llmquota.core.Priority;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.core.QuotaEvents;
import dev.llmquota.core.Usage;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * Meters of calls as they pass: admission waits, shadow-mode waits and refusals, spend,
 * reserved and billed output, estimate drift and the provider's rate-limit answers. A
 * pool evicted by {@code max-pools} takes its meters with it, and calls that outlive it
 * register nothing new.
 */
final class CallMeters extends EngineMeterBinder {

	/** The meters of a pool's calls, removed when it is evicted. */
	private static final String[] NAMES = { LlmQuotaMetrics.WAIT, LlmQuotaMetrics.SHADOW_WAIT,
			LlmQuotaMetrics.SHADOW_REFUSED, LlmQuotaMetrics.SPEND, LlmQuotaMetrics.THROTTLED, LlmQuotaMetrics.DRIFT,
			LlmQuotaMetrics.OUTPUT_RESERVED, LlmQuotaMetrics.OUTPUT_BILLED };

	CallMeters(QuotaEngine engine) {
		super(engine);
	}

	@Override
	QuotaEvents listenerFor(MeterRegistry registry) {
		return new Listener(registry);
	}

	private static final class Listener implements QuotaEvents {

		private final MeterRegistry registry;

		private final Set<Pool> pools = ConcurrentHashMap.newKeySet();

		Listener(MeterRegistry registry) {
			this.registry = registry;
		}

		@Override
		public void poolCreated(Pool pool) {
			this.pools.add(pool);
		}

		@Override
		public void poolEvicted(Pool pool) {
			this.pools.remove(pool);
			for (String name : NAMES) {
				this.registry.find(name).tags(LlmQuotaMetrics.tags(pool)).meters().forEach(this.registry::remove);
			}
		}

		/** Events of calls that outlive their evicted pool register nothing new. */
		private boolean live(Pool pool) {
			return this.pools.contains(pool);
		}

		@Override
		public void admitted(Pool pool, Priority priority, long waitedNanos) {
			if (live(pool)) {
				Timer.builder(LlmQuotaMetrics.WAIT)
					.description("Time from a call to its admission")
					.tags(LlmQuotaMetrics.tags(pool).and("priority", priority.name()))
					.register(this.registry)
					.record(waitedNanos, TimeUnit.NANOSECONDS);
			}
		}

		@Override
		public void shadowed(Pool pool, long wouldHaveWaitedNanos) {
			if (live(pool)) {
				Timer.builder(LlmQuotaMetrics.SHADOW_WAIT)
					.description("In shadow mode, how long calls would have waited for admission in enforce mode")
					.tags(LlmQuotaMetrics.tags(pool))
					.register(this.registry)
					.record(wouldHaveWaitedNanos, TimeUnit.NANOSECONDS);
			}
		}

		@Override
		public void shadowRefused(Pool pool, Throwable refusal) {
			if (live(pool)) {
				Counter.builder(LlmQuotaMetrics.SHADOW_REFUSED)
					.description("In shadow mode, calls enforce mode would have refused")
					.tags(LlmQuotaMetrics.tags(pool).and("reason", refusal.getClass().getSimpleName()))
					.register(this.registry)
					.increment();
			}
		}

		@Override
		public void spent(Pool pool, double micros) {
			if (live(pool)) {
				Counter.builder(LlmQuotaMetrics.SPEND)
					.description("What calls cost, from their usage and the model's prices; what they reserved"
							+ " where their usage is unknown or estimated, as budgets are charged")
					.tags(LlmQuotaMetrics.tags(pool))
					.register(this.registry)
					.increment(micros / 1e6);
			}
		}

		@Override
		public void reconciled(Pool pool, Demand demand, Usage usage, long reservedOutput, long billedOutput) {
			if (!live(pool)) {
				return;
			}
			Counter.builder(LlmQuotaMetrics.OUTPUT_RESERVED)
				.description("Output tokens reserved at admission by calls that reported usage")
				.baseUnit("tokens")
				.tags(LlmQuotaMetrics.tags(pool))
				.register(this.registry)
				.increment(reservedOutput);
			Counter.builder(LlmQuotaMetrics.OUTPUT_BILLED)
				.description("Output tokens those calls were billed")
				.baseUnit("tokens")
				.tags(LlmQuotaMetrics.tags(pool))
				.register(this.registry)
				.increment(billedOutput);
		}

		@Override
		public void drift(Pool pool, double ratio) {
			if (live(pool)) {
				DistributionSummary.builder(LlmQuotaMetrics.DRIFT)
					.description("Input tokens the provider counted over those estimated, per call")
					.baseUnit("ratio")
					.tags(LlmQuotaMetrics.tags(pool))
					.register(this.registry)
					.record(ratio);
			}
		}

		@Override
		public void throttled(Pool pool, Dimension dimension) {
			if (live(pool)) {
				Counter.builder(LlmQuotaMetrics.THROTTLED)
					.description("Rate-limit answers from the provider")
					.baseUnit("answers")
					.tags(LlmQuotaMetrics.tags(pool).and("dimension", (dimension != null) ? dimension.id() : "unknown"))
					.register(this.registry)
					.increment();
			}
		}

	}

}
