package dev.llmquota.metrics;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.Cost;
import dev.llmquota.core.Demand;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.Pool;
import dev.llmquota.core.PoolSnapshot;
import dev.llmquota.core.Priority;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.core.QuotaEvents;
import dev.llmquota.core.ServerLimit;
import dev.llmquota.core.Usage;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Micrometer meters of llm-quota: limits and remaining per dimension, calls in flight,
 * admission waits, provider rate-limit answers, estimate drift and reserved versus billed
 * output. Gauges of a pool evicted by {@code max-pools} are removed with it.
 */
public class LlmQuotaMetrics implements MeterBinder, QuotaEvents {

	static final String LIMIT = "llm.quota.limit";

	static final String REMAINING = "llm.quota.remaining";

	static final String IN_FLIGHT = "llm.quota.in.flight";

	static final String WAIT = "llm.quota.wait";

	static final String WAITING = "llm.quota.waiting";

	static final String SPEND = "llm.quota.spend";

	static final String SHADOW_WAIT = "llm.quota.shadow.wait";

	static final String SHADOW_REFUSED = "llm.quota.shadow.refused";

	static final String THROTTLED = "llm.quota.throttled";

	static final String DRIFT = "llm.quota.estimate.drift";

	static final String OUTPUT_RESERVED = "llm.quota.output.reserved";

	static final String OUTPUT_BILLED = "llm.quota.output.billed";

	static final String STORE_FALLBACK = "llm.quota.store.fallback";

	static final String STORE_FALLBACKS = "llm.quota.store.fallbacks";

	private final QuotaEngine engine;

	private volatile MeterRegistry registry;

	private final Map<Pool, List<Meter>> gauges = new ConcurrentHashMap<>();

	/**
	 * Creates the binder.
	 * @param engine the engine
	 */
	public LlmQuotaMetrics(QuotaEngine engine) {
		this.engine = engine;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		this.registry = registry;
		String backend = this.engine.store().status().backend();
		Gauge.builder(STORE_FALLBACK, this.engine, (engine) -> engine.store().status().fallback() ? 1 : 0)
			.description("1 while the shared store does not answer and calls are served from local books")
			.tag("backend", backend)
			.register(registry);
		FunctionCounter.builder(STORE_FALLBACKS, this.engine, (engine) -> engine.store().status().fallbacks())
			.description("Times the shared store stopped answering")
			.tag("backend", backend)
			.register(registry);
		this.engine.addListener(this);
	}

	@Override
	public void poolCreated(Pool pool) {
		MeterRegistry registry = this.registry;
		if (registry == null || this.gauges.containsKey(pool)) {
			return;
		}
		List<Meter> meters = new ArrayList<>();
		for (Dimension dimension : Dimension.values()) {
			for (BucketSpec.Scope scope : BucketSpec.Scope.values()) {
				Tags tags = tags(pool).and("scope", scope.id(), "dimension", dimension.id());
				boolean limited = (scope == BucketSpec.Scope.POOL ? pool.limits() : pool.account().limits()).asMap()
					.containsKey(dimension);
				if (!limited && (scope == BucketSpec.Scope.ACCOUNT || dimension.countsMoney())) {
					// budgets are the account's; the pool shows the dimensions it may
					// limit
					continue;
				}
				meters.add(Gauge.builder(LIMIT, () -> limit(pool, scope, dimension))
					.description("Published limit of a dimension, configured or reported by the provider")
					.baseUnit(unit(dimension))
					.tags(tags)
					.strongReference(true)
					.register(registry));
				meters.add(Gauge.builder(REMAINING, () -> localRemaining(pool, scope, dimension))
					.description("What the client's own books leave of the published limit, in the provider's terms:"
							+ " limit x bucket level / bucket capacity")
					.baseUnit(unit(dimension))
					.tags(tags.and("source", "local"))
					.strongReference(true)
					.register(registry));
				if (scope == BucketSpec.Scope.POOL && dimension.kind() != Dimension.Kind.CONCURRENCY) {
					meters.add(Gauge.builder(REMAINING, () -> serverRemaining(pool, dimension))
						.description("Units left as the provider's latest rate-limit headers said")
						.baseUnit(unit(dimension))
						.tags(tags.and("source", "server"))
						.strongReference(true)
						.register(registry));
				}
			}
		}
		for (Priority priority : Priority.values()) {
			meters.add(Gauge.builder(WAITING, () -> this.engine.waiting(pool, priority))
				.description("Calls waiting for admission")
				.baseUnit("requests")
				.tags(tags(pool).and("priority", priority.name()))
				.strongReference(true)
				.register(registry));
		}
		meters.add(Gauge.builder(IN_FLIGHT, pool.stats(), (stats) -> stats.inFlightCalls())
			.description("Calls admitted and not yet ended")
			.baseUnit("requests")
			.tags(tags(pool).and("scope", "pool"))
			.strongReference(true)
			.register(registry));
		this.gauges.put(pool, meters);
	}

	@Override
	public void poolEvicted(Pool pool) {
		this.gauges.remove(pool);
		MeterRegistry registry = this.registry;
		if (registry == null) {
			return;
		}
		// every meter of the pool, the gauges and those its calls created
		for (String name : List.of(LIMIT, REMAINING, IN_FLIGHT, WAIT, THROTTLED, DRIFT, OUTPUT_RESERVED,
				OUTPUT_BILLED)) {
			registry.find(name).tags(tags(pool)).meters().forEach(registry::remove);
		}
	}

	/** Events of calls that outlive their evicted pool register nothing new. */
	private MeterRegistry registryFor(Pool pool) {
		MeterRegistry registry = this.registry;
		return (registry != null && this.gauges.containsKey(pool)) ? registry : null;
	}

	@Override
	public void admitted(Pool pool, Priority priority, long waitedNanos) {
		MeterRegistry registry = registryFor(pool);
		if (registry != null) {
			Timer.builder(WAIT)
				.description("Time from a call to its admission")
				.tags(tags(pool).and("priority", priority.name()))
				.register(registry)
				.record(waitedNanos, TimeUnit.NANOSECONDS);
		}
	}

	@Override
	public void shadowed(Pool pool, long wouldHaveWaitedNanos) {
		MeterRegistry registry = registryFor(pool);
		if (registry != null) {
			Timer.builder(SHADOW_WAIT)
				.description("In shadow mode, how long calls would have waited for admission in enforce mode")
				.tags(tags(pool))
				.register(registry)
				.record(wouldHaveWaitedNanos, TimeUnit.NANOSECONDS);
		}
	}

	@Override
	public void shadowRefused(Pool pool, Throwable refusal) {
		MeterRegistry registry = registryFor(pool);
		if (registry != null) {
			Counter.builder(SHADOW_REFUSED)
				.description("In shadow mode, calls enforce mode would have refused")
				.tags(tags(pool).and("reason", refusal.getClass().getSimpleName()))
				.register(registry)
				.increment();
		}
	}

	@Override
	public void reconciled(Pool pool, Demand demand, Usage usage, long reservedOutput, long billedOutput) {
		MeterRegistry registry = registryFor(pool);
		if (registry != null) {
			Cost cost = pool.spec().accounting().cost();
			if (cost != null) {
				Counter.builder(SPEND)
					.description("What calls cost, from their usage and the model's prices")
					.tags(tags(pool))
					.register(registry)
					.increment(cost.micros(usage) / 1e6);
			}
			Counter.builder(OUTPUT_RESERVED)
				.description("Output tokens reserved at admission by calls that reported usage")
				.baseUnit("tokens")
				.tags(tags(pool))
				.register(registry)
				.increment(reservedOutput);
			Counter.builder(OUTPUT_BILLED)
				.description("Output tokens those calls were billed")
				.baseUnit("tokens")
				.tags(tags(pool))
				.register(registry)
				.increment(billedOutput);
		}
	}

	@Override
	public void drift(Pool pool, double ratio) {
		MeterRegistry registry = registryFor(pool);
		if (registry != null) {
			DistributionSummary.builder(DRIFT)
				.description("Input tokens the provider counted over those estimated, per call")
				.baseUnit("ratio")
				.tags(tags(pool))
				.register(registry)
				.record(ratio);
		}
	}

	@Override
	public void throttled(Pool pool, Dimension dimension) {
		MeterRegistry registry = registryFor(pool);
		if (registry != null) {
			Counter.builder(THROTTLED)
				.description("Rate-limit answers from the provider")
				.baseUnit("answers")
				.tags(tags(pool).and("dimension", (dimension != null) ? dimension.id() : "unknown"))
				.register(registry)
				.increment();
		}
	}

	private static Tags tags(Pool pool) {
		return Tags.of("provider", pool.provider(), "region", pool.region(), "model", pool.model());
	}

	/** Budgets are in the account's currency, which has no name here. */
	private static String unit(Dimension dimension) {
		if (dimension.countsMoney()) {
			return null;
		}
		return dimension.countsTokens() ? "tokens" : "requests";
	}

	/** Money budgets are kept in millionths; meters show them in the currency. */
	private static double scaled(Dimension dimension, double units) {
		return dimension.countsMoney() ? units / 1e6 : units;
	}

	private static Long configured(Pool pool, BucketSpec.Scope scope, Dimension dimension) {
		return ((scope == BucketSpec.Scope.POOL) ? pool.limits() : pool.account().limits()).asMap().get(dimension);
	}

	private static double limit(Pool pool, BucketSpec.Scope scope, Dimension dimension) {
		Long limit = configured(pool, scope, dimension);
		return (limit != null) ? scaled(dimension, limit) : Double.NaN;
	}

	private double localRemaining(Pool pool, BucketSpec.Scope scope, Dimension dimension) {
		Long limit = configured(pool, scope, dimension);
		if (limit == null) {
			return Double.NaN;
		}
		if (dimension.kind() == Dimension.Kind.CONCURRENCY) {
			PoolSnapshot.GateSnapshot gate = this.engine.gate(pool, scope, dimension);
			return (gate != null) ? gate.inProviderTerms(limit) : Double.NaN;
		}
		List<BucketSpec> buckets = (scope == BucketSpec.Scope.POOL) ? pool.buckets() : pool.account().buckets();
		for (BucketSpec bucket : buckets) {
			if (bucket.dimension() == dimension) {
				Instant wallNow = this.engine.clock().instant();
				long level = this.engine.store().state(bucket, this.engine.clock().nanoTime(), wallNow).remaining();
				// a budget shows what is left of it; a rate what the provider would say
				return dimension.countsMoney() ? scaled(dimension, Math.max(0, level))
						: bucket.inProviderTerms(limit, level);
			}
		}
		return Double.NaN;
	}

	private static double serverRemaining(Pool pool, Dimension dimension) {
		ServerLimit reported = pool.serverLimits().get(dimension);
		return (reported != null && reported.remaining() != null) ? reported.remaining() : Double.NaN;
	}

}
