package dev.llmquota.test.simulator;

import java.util.List;
import java.util.Map;

import dev.llmquota.test.simulator.clock.SimClock;
import dev.llmquota.test.simulator.dialect.Dialect;
import dev.llmquota.test.simulator.quota.OutputPolicy;
import dev.llmquota.test.simulator.quota.QuotaBook;

/**
 * What a running simulator holds: configuration, books, log, faults and switches.
 */
final class SimulatorState {

	private final SimClock clock;

	private final List<Dialect> dialects;

	private final Map<String, OutputPolicy> policies;

	private final QuotaBook book;

	private final LatencyModel latency;

	private final FaultPlan faults;

	private final RequestLog log = new RequestLog();

	private final boolean enforce;

	private volatile boolean exhausted;

	private final Map<String, String> requiredHeaders;

	SimulatorState(SimClock clock, List<Dialect> dialects, Map<String, OutputPolicy> policies, QuotaBook book,
			LatencyModel latency, FaultPlan faults, boolean enforce, boolean exhausted,
			Map<String, String> requiredHeaders) {
		this.requiredHeaders = Map.copyOf(requiredHeaders);
		this.clock = clock;
		this.dialects = List.copyOf(dialects);
		this.policies = Map.copyOf(policies);
		this.book = book;
		this.latency = latency;
		this.faults = faults;
		this.enforce = enforce;
		this.exhausted = exhausted;
	}

	SimClock clock() {
		return this.clock;
	}

	/** Headers every call must carry, with their values, as an API key is checked. */
	Map<String, String> requiredHeaders() {
		return this.requiredHeaders;
	}

	List<Dialect> dialects() {
		return this.dialects;
	}

	OutputPolicy outputPolicy(Dialect dialect) {
		return this.policies.getOrDefault(dialect.id(), dialect.defaultOutputPolicy());
	}

	QuotaBook book() {
		return this.book;
	}

	LatencyModel latency() {
		return this.latency;
	}

	FaultPlan faults() {
		return this.faults;
	}

	RequestLog log() {
		return this.log;
	}

	boolean enforce() {
		return this.enforce;
	}

	boolean exhausted() {
		return this.exhausted;
	}

	void exhausted(boolean exhausted) {
		this.exhausted = exhausted;
	}

}
