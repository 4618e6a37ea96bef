package dev.llmquota.metrics;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.llmquota.core.QuotaEngine;
import dev.llmquota.core.QuotaEvents;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * A binder that listens to the engine: one listener per registry it is bound to, each
 * removed from the engine on {@link #close()}, after which nothing is recorded.
 */
abstract class EngineMeterBinder implements MeterBinder, AutoCloseable {

	private final QuotaEngine engine;

	private final List<QuotaEvents> listeners = new CopyOnWriteArrayList<>();

	EngineMeterBinder(QuotaEngine engine) {
		this.engine = engine;
	}

	final QuotaEngine engine() {
		return this.engine;
	}

	/**
	 * Returns the listener that records into the registry.
	 * @param registry the registry
	 * @return the listener
	 */
	abstract QuotaEvents listenerFor(MeterRegistry registry);

	@Override
	public final void bindTo(MeterRegistry registry) {
		QuotaEvents listener = listenerFor(registry);
		this.listeners.add(listener);
		this.engine.addListener(listener);
	}

	@Override
	public final void close() {
		for (QuotaEvents listener : this.listeners) {
			this.engine.removeListener(listener);
		}
		this.listeners.clear();
	}

}
