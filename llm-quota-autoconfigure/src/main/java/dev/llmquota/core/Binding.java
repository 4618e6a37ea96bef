package dev.llmquota.core;

import java.util.Map;

/**
 * Which dimension binds a pool: the one that admits the fewest calls per minute for the
 * pool's recent mix of calls. A request-rate limit admits its rate; a token rate admits
 * it divided by the tokens an average call takes; concurrency admits it times a minute
 * over the latency; a daily limit admits a 1,440th of it. Money budgets are spend caps,
 * shown with what is left of them, not rates: they never bind here.
 */
public final class Binding {

	private Binding() {
	}

	/**
	 * Returns the binding dimension of a pool.
	 * @param pool the pool
	 * @param settings the engine's settings
	 * @return the dimension, or {@code null} if nothing limits the pool
	 */
	public static Dimension of(Pool pool, QuotaSettings settings) {
		Demand mix = pool.stats().meanDemand();
		if (mix == null) {
			mix = new Demand(0, pool.spec().defaultMaxTokens());
		}
		Dimension binding = null;
		double lowest = Double.MAX_VALUE;
		for (Limits limits : new Limits[] { pool.limits(), pool.account().limits() }) {
			for (Map.Entry<Dimension, Long> limit : limits.asMap().entrySet()) {
				if (limit.getKey().countsMoney()) {
					continue;
				}
				double calls = callsPerMinute(limit.getKey(), settings.enforced(limit.getValue()), mix, pool);
				if (calls < lowest) {
					lowest = calls;
					binding = limit.getKey();
				}
			}
		}
		return binding;
	}

	private static double callsPerMinute(Dimension dimension, long enforced, Demand mix, Pool pool) {
		// output charged only as generated still binds: its expected units count
		long units = Math.max(1, dimension.unitsExpected(mix, pool.spec().accounting(), pool.expectedOutput(mix)));
		return switch (dimension.kind()) {
			case RATE -> (double) enforced / units;
			case DAILY -> (double) enforced / units / 1440;
			case CONCURRENCY -> enforced * 60e9 / Math.max(1, pool.latencyNanos());
		};
	}

}
