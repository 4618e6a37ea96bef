package dev.llmquota.metrics;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.llmquota.core.Account;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.Pool;
import dev.llmquota.core.PoolSnapshot;
import dev.llmquota.core.Priority;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.core.QuotaEvents;
import dev.llmquota.core.ServerLimit;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;

/**
 * Gauges of every pool: limit and remaining per dimension and scope, calls waiting per
 * class, calls in flight. A pool evicted by {@code max-pools} takes its gauges with it.
 */
final class PoolMeters extends EngineMeterBinder {

	PoolMeters(QuotaEngine engine) {
		super(engine);
	}

	@Override
	QuotaEvents listenerFor(MeterRegistry registry) {
		return new Listener(registry);
	}

	private final class Listener implements QuotaEvents {

		private final MeterRegistry registry;

		private final Map<Pool, List<Meter>> gauges = new ConcurrentHashMap<>();

		Listener(MeterRegistry registry) {
			this.registry = registry;
		}

		@Override
		public void poolCreated(Pool pool) {
			if (this.gauges.containsKey(pool)) {
				return;
			}
			List<Meter> meters = new ArrayList<>();
			for (Dimension dimension : Dimension.values()) {
				for (BucketSpec.Scope scope : BucketSpec.Scope.values()) {
					if (configured(pool, scope, dimension) == null
							&& (scope == BucketSpec.Scope.ACCOUNT || dimension.countsMoney())) {
						// budgets are the account's; the pool shows the
						// dimensions it may limit, its account those it limits
						continue;
					}
					dimension(pool, scope, dimension, meters);
				}
			}
			for (Priority priority : Priority.values()) {
				meters.add(Gauge.builder(LlmQuotaMetrics.WAITING, () -> engine().waiting(pool, priority))
					.description("Calls waiting for admission")
					.baseUnit("requests")
					.tags(LlmQuotaMetrics.tags(pool).and("priority", priority.name()))
					.strongReference(true)
					.register(this.registry));
			}
			meters.add(Gauge.builder(LlmQuotaMetrics.IN_FLIGHT, pool.stats(), (stats) -> stats.inFlightCalls())
				.description("Calls admitted and not yet ended")
				.baseUnit("requests")
				.tags(LlmQuotaMetrics.tags(pool).and("scope", "pool"))
				.strongReference(true)
				.register(this.registry));
			this.gauges.put(pool, meters);
		}

		/** An account limit set at run time gets its gauges on each of its pools. */
		@Override
		public void accountLimitsChanged(Account account) {
			this.gauges.forEach((pool, meters) -> {
				if (pool.account() != account) {
					return;
				}
				synchronized (meters) {
					for (Dimension dimension : account.limits().asMap().keySet()) {
						Tags tags = LlmQuotaMetrics.tags(pool)
							.and("scope", BucketSpec.Scope.ACCOUNT.id(), "dimension", dimension.id());
						if (this.registry.find(LlmQuotaMetrics.LIMIT).tags(tags).gauge() == null) {
							dimension(pool, BucketSpec.Scope.ACCOUNT, dimension, meters);
						}
					}
				}
			});
		}

		/** The limit and remaining gauges of one dimension and scope of a pool. */
		private void dimension(Pool pool, BucketSpec.Scope scope, Dimension dimension, List<Meter> meters) {
			Tags tags = LlmQuotaMetrics.tags(pool).and("scope", scope.id(), "dimension", dimension.id());
			meters.add(gauge(LlmQuotaMetrics.LIMIT, () -> limit(pool, scope, dimension), dimension, tags)
				.description("Published limit of a dimension, configured or reported by the provider")
				.register(this.registry));
			meters.add(
					gauge(LlmQuotaMetrics.REMAINING, () -> localRemaining(pool, scope, dimension), dimension,
							tags.and("source", "local"))
						.description("What the client's own books leave of the published limit, in the provider's"
								+ " terms: limit x bucket level / bucket capacity")
						.register(this.registry));
			if (scope == BucketSpec.Scope.POOL && dimension.kind() != Dimension.Kind.CONCURRENCY) {
				meters.add(gauge(LlmQuotaMetrics.REMAINING, () -> serverRemaining(pool, dimension), dimension,
						tags.and("source", "server"))
					.description("Units left as the provider's latest rate-limit headers said, until the reset"
							+ " they named (none when it has passed)")
					.register(this.registry));
			}
		}

		@Override
		public void poolEvicted(Pool pool) {
			List<Meter> meters = this.gauges.remove(pool);
			if (meters != null) {
				synchronized (meters) {
					meters.forEach(this.registry::remove);
				}
			}
		}

	}

	private static Gauge.Builder<?> gauge(String name, java.util.function.Supplier<Number> value, Dimension dimension,
			Tags tags) {
		return Gauge.builder(name, value).baseUnit(LlmQuotaMetrics.unit(dimension)).tags(tags).strongReference(true);
	}

	private static Long configured(Pool pool, BucketSpec.Scope scope, Dimension dimension) {
		return ((scope == BucketSpec.Scope.POOL) ? pool.limits() : pool.account().limits()).asMap().get(dimension);
	}

	private static double limit(Pool pool, BucketSpec.Scope scope, Dimension dimension) {
		Long limit = configured(pool, scope, dimension);
		return (limit != null) ? LlmQuotaMetrics.scaled(dimension, limit) : Double.NaN;
	}

	private double localRemaining(Pool pool, BucketSpec.Scope scope, Dimension dimension) {
		Long limit = configured(pool, scope, dimension);
		if (limit == null) {
			return Double.NaN;
		}
		if (dimension.kind() == Dimension.Kind.CONCURRENCY) {
			PoolSnapshot.GateSnapshot gate = engine().gate(pool, scope, dimension);
			return (gate != null) ? gate.inProviderTerms(limit) : Double.NaN;
		}
		List<BucketSpec> buckets = (scope == BucketSpec.Scope.POOL) ? pool.buckets() : pool.account().buckets();
		for (BucketSpec bucket : buckets) {
			if (bucket.dimension() == dimension) {
				Instant wallNow = engine().clock().instant();
				long level = engine().store().state(bucket, engine().clock().nanoTime(), wallNow).remaining();
				// a budget shows what is left of it; a rate what the provider would say
				return dimension.countsMoney() ? LlmQuotaMetrics.scaled(dimension, Math.max(0, level))
						: bucket.inProviderTerms(limit, level);
			}
		}
		return Double.NaN;
	}

	private double serverRemaining(Pool pool, Dimension dimension) {
		ServerLimit reported = pool.currentServerLimits(engine().clock().nanoTime(), engine().clock().instant())
			.get(dimension);
		return (reported != null && reported.remaining() != null) ? reported.remaining() : Double.NaN;
	}

}
