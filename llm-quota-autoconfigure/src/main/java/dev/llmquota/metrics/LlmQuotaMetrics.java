package dev.llmquota.metrics;

import java.util.List;

import dev.llmquota.core.Dimension;
import dev.llmquota.core.Pool;
import dev.llmquota.core.QuotaEngine;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Micrometer meters of llm-quota, bound by three binders: pool gauges (limits and
 * remaining per dimension, calls waiting and in flight), call meters (admission waits,
 * provider rate-limit answers, estimate drift, reserved versus billed output, spend) and
 * store meters (fallback to local books). Gauges of a pool evicted by {@code max-pools}
 * are removed with it. Closing it stops the recording: the engine no longer tells it
 * anything.
 */
public class LlmQuotaMetrics implements MeterBinder, AutoCloseable {

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

	private final PoolMeters pools;

	private final CallMeters calls;

	private final StoreMeters store;

	/**
	 * Creates the binder.
	 * @param engine the engine
	 */
	public LlmQuotaMetrics(QuotaEngine engine) {
		this.pools = new PoolMeters(engine);
		this.calls = new CallMeters(engine);
		this.store = new StoreMeters(engine);
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		for (MeterBinder binder : List.of(this.store, this.pools, this.calls)) {
			binder.bindTo(registry);
		}
	}

	/** Stops recording: the engine's events no longer reach these meters. */
	@Override
	public void close() {
		this.pools.close();
		this.calls.close();
	}

	static Tags tags(Pool pool) {
		return Tags.of("provider", pool.provider(), "region", pool.region(), "model", pool.model());
	}

	/** Budgets are in the account's currency, which has no name here. */
	static String unit(Dimension dimension) {
		if (dimension.countsMoney()) {
			return null;
		}
		return dimension.countsTokens() ? "tokens" : "requests";
	}

	/** Money budgets are kept in millionths; meters show them in the currency. */
	static double scaled(Dimension dimension, double units) {
		return dimension.countsMoney() ? units / 1e6 : units;
	}

}
