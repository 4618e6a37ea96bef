package dev.llmquota.test.simulator.quota;

import java.time.Duration;

/**
 * A continuously refilling bucket: the limit refills per minute, and its capacity is the
 * enforcement window's share of the limit, so a 10 s window admits at most a sixth of the
 * minute's limit at once.
 */
final class RateBucket implements Meter {

	private static final double NANOS_PER_MINUTE = 60e9;

	private final Dimension dimension;

	private final long limit;

	private final double capacity;

	private final double perNano;

	private double level;

	private long lastNanos;

	RateBucket(Dimension dimension, long limit, Duration window, long nowNanos) {
		this.dimension = dimension;
		this.limit = limit;
		this.capacity = Math.max(Math.min(1.0, limit), limit * (window.toNanos() / NANOS_PER_MINUTE));
		this.perNano = limit / NANOS_PER_MINUTE;
		this.level = this.capacity;
		this.lastNanos = nowNanos;
	}

	private void refill(long nowNanos) {
		long elapsed = nowNanos - this.lastNanos;
		if (elapsed <= 0) {
			return;
		}
		this.level = Math.min(this.capacity, this.level + elapsed * this.perNano);
		this.lastNanos = nowNanos;
	}

	@Override
	public Dimension dimension() {
		return this.dimension;
	}

	@Override
	public long limit() {
		return this.limit;
	}

	@Override
	public boolean fits(long amount, long nowNanos) {
		refill(nowNanos);
		// a tiny epsilon absorbs floating point residue of exact refills
		return amount <= this.level + 1e-6;
	}

	@Override
	public void take(long amount, long nowNanos) {
		refill(nowNanos);
		this.level = Math.min(this.capacity, this.level - amount);
	}

	@Override
	public void takeUpTo(long amount, long nowNanos) {
		refill(nowNanos);
		this.level = Math.max(Math.min(this.level, 0), this.level - amount);
	}

	@Override
	public Duration waitFor(long amount, long nowNanos) {
		refill(nowNanos);
		if (amount > this.capacity + 1e-6 || this.perNano <= 0) {
			return null;
		}
		double missing = amount - this.level;
		return (missing <= 0) ? Duration.ZERO : Duration.ofNanos((long) Math.ceil(missing / this.perNano));
	}

	@Override
	public DimensionState state(String scope, long nowNanos) {
		refill(nowNanos);
		long remaining = (long) Math.max(0, Math.floor(this.level + 1e-6));
		double missing = this.capacity - this.level;
		Duration untilFull = (missing <= 1e-6 || this.perNano <= 0) ? Duration.ZERO
				: Duration.ofNanos((long) Math.ceil(missing / this.perNano));
		return new DimensionState(this.dimension, scope, this.limit, remaining, untilFull);
	}

	@Override
	public void reset(long nowNanos) {
		this.level = this.capacity;
		this.lastNanos = nowNanos;
	}

}
