package dev.llmquota.metrics;

import dev.llmquota.core.QuotaEngine;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Meters of the store: whether calls are served from local books because the shared store
 * does not answer, and how often that began.
 */
final class StoreMeters implements MeterBinder {

	private final QuotaEngine engine;

	StoreMeters(QuotaEngine engine) {
		this.engine = engine;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		String backend = this.engine.store().status().backend();
		Gauge
			.builder(LlmQuotaMetrics.STORE_FALLBACK, this.engine,
					(engine) -> engine.store().status().fallback() ? 1 : 0)
			.description("1 while the shared store does not answer and calls are served from local books")
			.tag("backend", backend)
			.register(registry);
		FunctionCounter
			.builder(LlmQuotaMetrics.STORE_FALLBACKS, this.engine, (engine) -> engine.store().status().fallbacks())
			.description("Times the shared store stopped answering")
			.tag("backend", backend)
			.register(registry);
	}

}
