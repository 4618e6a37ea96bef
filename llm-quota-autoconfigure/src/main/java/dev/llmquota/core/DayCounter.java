package dev.llmquota.core;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;

import dev.llmquota.core.kernel.Arith;

/**
 * Units spent in the current calendar day of a zone, as pure data: every operation takes
 * the wall time as an argument. A clock that jumps back never resets the counter (nothing
 * is ever under-counted); the counter resets only when a later day starts. Instances are
 * not thread-safe.
 */
public final class DayCounter {

	private final long limit;

	private final ZoneId zone;

	/** Which calendar period counts: a day, or a month for {@code budget-per-month}. */
	private final Dimension period;

	private LocalDate day;

	private long used;

	/**
	 * Creates an unused counter.
	 * @param limit the units allowed per day, at least 1
	 * @param zone the zone whose calendar days count
	 * @param now the current wall time
	 */
	public DayCounter(long limit, ZoneId zone, Instant now) {
		this(limit, zone, now, Dimension.REQUESTS_PER_DAY);
	}

	/**
	 * Creates an unused counter of a dimension's calendar period.
	 * @param limit the units allowed per period, at least 1
	 * @param zone the zone whose calendar counts
	 * @param now the current wall time
	 * @param period the dimension whose period counts (a day, or a month)
	 */
	public DayCounter(long limit, ZoneId zone, Instant now, Dimension period) {
		if (limit < 1) {
			throw new IllegalArgumentException("Daily limit must be positive but was " + limit);
		}
		this.limit = limit;
		this.zone = zone;
		this.period = period;
		this.day = period.periodStart(LocalDate.ofInstant(now, zone));
	}

	/**
	 * Restores a counter from stored state.
	 * @param limit the units allowed per day
	 * @param zone the zone whose calendar days count
	 * @param day the stored day
	 * @param used the units spent on that day
	 * @return the counter
	 */
	public static DayCounter restore(long limit, ZoneId zone, LocalDate day, long used) {
		return restore(limit, zone, day, used, Dimension.REQUESTS_PER_DAY);
	}

	/**
	 * Restores a counter of a dimension's calendar period from stored state.
	 * @param limit the units allowed per period
	 * @param zone the zone whose calendar counts
	 * @param day the stored period's first day
	 * @param used the units spent in that period
	 * @param period the dimension whose period counts
	 * @return the counter
	 */
	public static DayCounter restore(long limit, ZoneId zone, LocalDate day, long used, Dimension period) {
		DayCounter counter = new DayCounter(limit, zone, day.atStartOfDay(zone).toInstant(), period);
		counter.used = used;
		return counter;
	}

	public long limit() {
		return this.limit;
	}

	/** Returns the stored day, for stores that persist the state. */
	public LocalDate day() {
		return this.day;
	}

	/**
	 * Returns when the period this counter counts began: after a wall clock stepped back,
	 * later than the clock reads (the counter never goes back).
	 * @return the start of the counted period
	 */
	public Instant countedSince() {
		return this.day.atStartOfDay(this.zone).toInstant();
	}

	/**
	 * Returns the units spent today.
	 * @param now the current wall time
	 * @return units spent
	 */
	public long used(Instant now) {
		roll(now);
		return this.used;
	}

	/**
	 * Returns whether {@code units} can be taken today: they fit, or a call larger than
	 * the whole limit finds the day unused. Nothing always fits: a model without a price
	 * spends nothing of a budget that another's usage took beyond its limit.
	 * @param units the units wanted
	 * @param now the current wall time
	 * @return whether they can be taken
	 */
	public boolean fits(long units, Instant now) {
		if (units <= 0) {
			return true;
		}
		roll(now);
		return (units > this.limit) ? this.used == 0 : Arith.saturatedAdd(this.used, units) <= this.limit;
	}

	/**
	 * Takes units today.
	 * @param units the units (negative to give back, never below zero)
	 * @param now the current wall time
	 */
	public void add(long units, Instant now) {
		roll(now);
		this.used = Math.max(0, Arith.saturatedAdd(this.used, units));
	}

	/**
	 * Returns when the next calendar day starts.
	 * @param now the current wall time
	 * @return the start of the next day
	 */
	public Instant nextReset(Instant now) {
		roll(now);
		return this.period.nextPeriod(this.day).atStartOfDay(this.zone).toInstant();
	}

	private void roll(Instant now) {
		LocalDate today = this.period.periodStart(LocalDate.ofInstant(now, this.zone));
		if (today.isAfter(this.day)) {
			this.day = today;
			this.used = 0;
		}
	}

}
