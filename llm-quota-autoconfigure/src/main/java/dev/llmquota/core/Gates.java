package dev.llmquota.core;

import java.util.ArrayList;
import java.util.List;

import dev.llmquota.core.kernel.Arith;

/**
 * The in-flight gates of one scope: its configured {@code concurrent-requests}, and, when
 * enabled, one Little's-law bound per configured rate dimension, sized
 * {@code enforced rate / 60 s x latency}. Guarded by the account's admission lock.
 */
final class Gates {

	/** The weights of a call that enters no gate. */
	private static final long[] NO_WEIGHTS = new long[0];

	private final List<InFlightGate> gates;

	Gates(Limits limits, QuotaSettings settings, boolean littlesLaw, long latencyNanos) {
		List<InFlightGate> list = new ArrayList<>();
		Long concurrent = limits.asMap().get(Dimension.CONCURRENT_REQUESTS);
		if (concurrent != null) {
			list.add(new InFlightGate(Dimension.CONCURRENT_REQUESTS, false, settings.enforced(concurrent)));
		}
		if (littlesLaw) {
			limits.asMap().forEach((dimension, limit) -> {
				if (dimension.kind() == Dimension.Kind.RATE) {
					list.add(new InFlightGate(dimension, true, 1));
				}
			});
		}
		this.gates = List.copyOf(list);
		resize(limits, settings, latencyNanos);
	}

	List<InFlightGate> all() {
		return this.gates;
	}

	void resize(Limits limits, QuotaSettings settings, long latencyNanos) {
		for (InFlightGate gate : this.gates) {
			Long limit = limits.asMap().get(gate.dimension());
			if (limit == null) {
				continue;
			}
			gate.resize(gate.derived() ? littlesLawBound(settings.enforced(limit), latencyNanos)
					: settings.enforced(limit));
		}
	}

	/**
	 * Returns Little's law for a rate: what may be outstanding at once so that the rate
	 * is not passed, {@code enforced / 60 s x latency}, rounded down.
	 * @param enforcedPerMinute the enforced rate per minute
	 * @param latencyNanos the whole-call latency
	 * @return the in-flight bound
	 */
	static long littlesLawBound(long enforcedPerMinute, long latencyNanos) {
		return Arith.mulDiv(enforcedPerMinute, latencyNanos, Arith.NANOS_PER_MINUTE);
	}

	static long units(InFlightGate gate, Demand demand, Accounting accounting, long expectedOutput) {
		return (gate.dimension().countsTokens()) ? gate.dimension().unitsExpected(demand, accounting, expectedOutput)
				: 1;
	}

	/**
	 * Enters a call into its gates.
	 * @return the weights held, one per gate, to give back to {@link #release}
	 */
	static long[] take(List<Waiter.GateUse> uses) {
		if (uses.isEmpty()) {
			return NO_WEIGHTS;
		}
		long[] weights = new long[uses.size()];
		for (int i = 0; i < uses.size(); i++) {
			weights[i] = uses.get(i).gate().take(uses.get(i).units());
		}
		return weights;
	}

	static void release(List<Waiter.GateUse> uses, long[] weights) {
		for (int i = 0; i < uses.size(); i++) {
			uses.get(i).gate().release(weights[i]);
		}
	}

	/** The gates a call enters, its pool's then its account's, and its units in each. */
	static List<Waiter.GateUse> uses(Pool pool, Demand demand) {
		Accounting accounting = pool.spec().accounting();
		List<InFlightGate> own = pool.gates();
		List<InFlightGate> shared = pool.account().gates();
		if (own.isEmpty() && shared.isEmpty()) {
			return List.of();
		}
		long expectedOutput = pool.expectedOutput(demand);
		Waiter.GateUse[] uses = new Waiter.GateUse[own.size() + shared.size()];
		int i = 0;
		for (InFlightGate gate : own) {
			uses[i++] = new Waiter.GateUse(gate, Gates.units(gate, demand, accounting, expectedOutput));
		}
		for (InFlightGate gate : shared) {
			uses[i++] = new Waiter.GateUse(gate, Gates.units(gate, demand, accounting, expectedOutput));
		}
		return List.of(uses);
	}

}
