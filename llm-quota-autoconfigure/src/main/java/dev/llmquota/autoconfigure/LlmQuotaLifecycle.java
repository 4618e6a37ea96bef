package dev.llmquota.autoconfigure;

import dev.llmquota.core.QuotaEngine;
import dev.llmquota.core.QuotaStore;

import org.springframework.context.SmartLifecycle;

/**
 * Shuts llm-quota down while the connections it needs still work: after the web server
 * has stopped taking requests, before the Redis connection and HTTP client resources
 * stop. Waiting calls fail, admitted calls give their slots back, and a shared store
 * releases this replica's leases at once instead of letting them expire.
 */
final class LlmQuotaLifecycle implements SmartLifecycle {

	/**
	 * After the web server has stopped taking requests (its graceful shutdown and stop
	 * run at DEFAULT_PHASE - 1024 and - 2048), and before the Redis connection factory
	 * and Reactor Netty's resources stop (phase 0): the leases are given back while the
	 * connection still works.
	 */
	static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;

	private final QuotaEngine engine;

	private final QuotaStore store;

	private volatile boolean running;

	LlmQuotaLifecycle(QuotaEngine engine, QuotaStore store) {
		this.engine = engine;
		this.store = store;
	}

	@Override
	public void start() {
		this.running = true;
	}

	@Override
	public void stop() {
		this.running = false;
		this.engine.close();
		this.store.close();
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return PHASE;
	}

}
