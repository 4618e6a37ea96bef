package dev.llmquota.test.simulator.quota;

import java.time.Duration;

/**
 * A continuously refilling bucket: the limit refills per minute, its capacity is the
 * enforcement window's share of the limit, and what it reports is scaled back to
 * per-minute units.
 */
final class RateBucket implements Meter {

	private static final double NANOS_PER_MINUTE = 60e9;

	/** Absorbs floating point residue of exact refills. */
	private static final double EPSILON = 1e-6;

	private final Dimension dimension;

	private final long limit;

	private final double capacity;

	private double drainPerMinute;

	private double level;

	private long lastNanos;

	RateBucket(Dimension dimension, long limit, Duration window, long nowNanos) {
		this.dimension = dimension;
		this.limit = limit;
		this.capacity = Math.max(Math.min(1.0, limit), limit * (double) window.toNanos() / NANOS_PER_MINUTE);
		this.level = this.capacity;
		this.lastNanos = nowNanos;
	}

	/**
	 * Lowers the refill by a steady spender's rate, so what it spends does not depend on
	 * how often the bucket is read.
	 */
	void drain(long unitsPerMinute, long nowNanos) {
		refill(nowNanos);
		this.drainPerMinute += unitsPerMinute;
	}

	private void refill(long nowNanos) {
		long elapsed = nowNanos - this.lastNanos;
		if (elapsed <= 0) {
			return;
		}
		this.lastNanos = nowNanos;
		double change = elapsed * (this.limit - this.drainPerMinute) / NANOS_PER_MINUTE;
		if (change >= 0) {
			this.level = Math.min(this.capacity, this.level + change);
		}
		else {
			// a spender outrunning the refill empties the bucket but never
			// drives it into debt
			this.level = Math.max(Math.min(this.level, 0), this.level + change);
		}
	}

	/**
	 * The largest call that can ever be admitted: one larger than the window's share but
	 * within the minute's limit goes through a full bucket and leaves it in debt.
	 */
	private double largest() {
		return Math.max(this.capacity, this.limit);
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
		if (amount <= this.level + EPSILON) {
			return true;
		}
		return amount > this.capacity && amount <= largest() + EPSILON && this.level >= this.capacity - EPSILON;
	}

	@Override
	public void take(long amount, long nowNanos) {
		refill(nowNanos);
		this.level = Math.min(this.capacity, this.level - amount);
	}

	@Override
	public void takeRefused(long amount, long nowNanos) {
		refill(nowNanos);
		this.level = Math.max(this.level - amount, Math.min(this.level, -this.limit));
	}

	@Override
	public Duration waitFor(long amount, long nowNanos) {
		refill(nowNanos);
		if (amount > largest() + EPSILON) {
			return null;
		}
		return untilLevel(Math.min(amount, this.capacity));
	}

	private Duration untilLevel(double target) {
		double missing = target - this.level;
		if (missing <= EPSILON) {
			return Duration.ZERO;
		}
		double net = this.limit - this.drainPerMinute;
		// with a spender taking the whole refill nothing ever frees up; quote
		// the plain refill
		double perMinute = (net > 0) ? net : this.limit;
		return Duration.ofNanos((long) Math.ceil(missing * NANOS_PER_MINUTE / perMinute - 1e-3));
	}

	@Override
	public DimensionState state(String scope, long nowNanos) {
		refill(nowNanos);
		long remaining = (this.capacity <= 0) ? 0
				: (long) Math.max(0, Math.floor(this.level * this.limit / this.capacity + EPSILON));
		Duration untilFull = (this.limit > 0) ? untilLevel(this.capacity) : Duration.ZERO;
		return new DimensionState(this.dimension, scope, this.limit, remaining, untilFull);
	}

}
