package dev.llmquota.actuate;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.llmquota.core.Mode;
import dev.llmquota.core.Pool;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.core.QuotaState;
import dev.llmquota.core.StoreStatus;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/**
 * The {@code llmQuota} health component: {@code UP} with the pools listed by state; while
 * a pool is exhausted, the configured status ({@code UP} by default, so one account out
 * of credit does not take every replica out of the load balancer); {@code DOWN} when the
 * store does not answer.
 */
public class LlmQuotaHealthIndicator extends AbstractHealthIndicator {

	private final QuotaEngine engine;

	private final Status exhaustedStatus;

	/**
	 * Creates the indicator.
	 * @param engine the engine
	 * @param exhaustedStatus the status while a pool is exhausted
	 */
	public LlmQuotaHealthIndicator(QuotaEngine engine, Status exhaustedStatus) {
		super("llm-quota health check failed");
		this.engine = engine;
		this.exhaustedStatus = exhaustedStatus;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		StoreStatus store = this.engine.store().status();
		Map<String, Object> storeDetails = new LinkedHashMap<>();
		storeDetails.put("backend", store.backend());
		storeDetails.put("reachable", store.reachable());
		if (!store.reachable()) {
			storeDetails.put("since", String.valueOf(store.since()));
			storeDetails.put("serving", store.fallback() ? "local fallback" : "nothing: calls are refused");
		}
		storeDetails.put("fallbacks", store.fallbacks());
		builder.withDetail("store", storeDetails);
		if (!this.engine.store().isAvailable()) {
			builder.down();
			return;
		}
		Map<String, List<String>> byState = new LinkedHashMap<>();
		for (QuotaState state : QuotaState.values()) {
			byState.put(state.name(), new ArrayList<>());
		}
		boolean exhausted = false;
		for (Pool pool : this.engine.pools()) {
			QuotaState state = this.engine.state(pool);
			byState.get(state.name()).add(pool.provider() + "/" + pool.model());
			// a pool in shadow mode holds back no call: listed, it changes no status
			exhausted |= state == QuotaState.EXHAUSTED && pool.spec().mode() == Mode.ENFORCE;
		}
		builder.status(exhausted ? this.exhaustedStatus : Status.UP);
		byState.forEach(builder::withDetail);
	}

}
