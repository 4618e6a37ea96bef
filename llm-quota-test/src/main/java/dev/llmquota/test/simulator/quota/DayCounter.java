package dev.llmquota.test.simulator.quota;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.function.Supplier;

/**
 * A cap per calendar day in a zone, reset at local midnight.
 */
final class DayCounter implements Meter {

	private final Dimension dimension;

	private final long limit;

	private final ZoneId zone;

	private final Supplier<Instant> wall;

	private LocalDate day;

	private long used;

	DayCounter(Dimension dimension, long limit, ZoneId zone, Supplier<Instant> wall) {
		this.dimension = dimension;
		this.limit = limit;
		this.zone = zone;
		this.wall = wall;
		this.day = today();
	}

	private LocalDate today() {
		return LocalDate.ofInstant(this.wall.get(), this.zone);
	}

	private void roll() {
		LocalDate today = today();
		if (!today.equals(this.day)) {
			this.day = today;
			this.used = 0;
		}
	}

	private Duration untilMidnight() {
		Instant now = this.wall.get();
		ZonedDateTime midnight = this.day.plusDays(1).atStartOfDay(this.zone);
		return Duration.between(now, midnight.toInstant());
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
		roll();
		return this.used + amount <= this.limit;
	}

	@Override
	public void take(long amount, long nowNanos) {
		roll();
		this.used = Math.max(0, this.used + amount);
	}

	/**
	 * Takes at most what is left, never going past the cap; for background spending.
	 */
	void takeUpTo(long amount) {
		roll();
		this.used = Math.max(this.used, Math.min(this.limit, this.used + amount));
	}

	@Override
	public Duration waitFor(long amount, long nowNanos) {
		roll();
		if (amount > this.limit) {
			return null;
		}
		return fits(amount, nowNanos) ? Duration.ZERO : untilMidnight();
	}

	@Override
	public DimensionState state(String scope, long nowNanos) {
		roll();
		long remaining = Math.max(0, this.limit - this.used);
		return new DimensionState(this.dimension, scope, this.limit, remaining,
				(this.used == 0) ? Duration.ZERO : untilMidnight());
	}

}
