package dev.llmquota.test.simulator.quota;

import java.time.Duration;

/**
 * Requests in flight, each held from admission until its last byte is sent.
 */
final class ConcurrencyGate implements Meter {

	/**
	 * A call refused for concurrency is told to retry after this; the real wait is
	 * unknown.
	 */
	static final Duration RETRY_HINT = Duration.ofSeconds(1);

	private final long limit;

	private long inUse;

	ConcurrencyGate(long limit) {
		this.limit = limit;
	}

	@Override
	public Dimension dimension() {
		return Dimension.CONCURRENT_REQUESTS;
	}

	@Override
	public long limit() {
		return this.limit;
	}

	@Override
	public boolean fits(long amount, long nowNanos) {
		return this.inUse + amount <= this.limit;
	}

	@Override
	public void take(long amount, long nowNanos) {
		this.inUse = Math.max(0, this.inUse + amount);
	}

	@Override
	public Duration waitFor(long amount, long nowNanos) {
		if (amount > this.limit) {
			return null;
		}
		return fits(amount, nowNanos) ? Duration.ZERO : RETRY_HINT;
	}

	@Override
	public DimensionState state(String scope, long nowNanos) {
		return new DimensionState(Dimension.CONCURRENT_REQUESTS, scope, this.limit,
				Math.max(0, this.limit - this.inUse), Duration.ZERO);
	}

}
