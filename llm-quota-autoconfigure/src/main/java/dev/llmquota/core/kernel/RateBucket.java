package dev.llmquota.core.kernel;

import java.math.BigInteger;

/**
 * Token-bucket state refilled continuously at a rate per minute, as pure data: every
 * operation takes the time as an argument and no clock lives inside.
 * <p>
 * The level may go below zero (debt) when an oversized call or an under-estimate is
 * charged, so that later calls wait until the debt is repaid. It never exceeds the
 * capacity. Refill uses integer nanoseconds and carries the remainder of each division,
 * so fractional tokens are never lost. The state's time may lie ahead of the caller's
 * clock when a call was booked ahead: the refill until then is already accounted for and
 * nothing before it can be used.
 * <p>
 * Units given back while calls are booked ahead raise the level at the time of the last
 * booking, as far as the bucket could have held them: a booking ahead that waited for a
 * fuller bucket already counted the refill, and the units given back would have
 * overflowed the capacity before it. The bucket keeps the highest level before a take
 * since the caller's clock last passed its time, its peak (with its fraction), and gives
 * back no more than the capacity above that. Units of a cancelled call, which the
 * provider never saw, name the time they were taken: the last booking's come back whole,
 * and those taken before the peak began to count, which it does not cover, come back to
 * no one while calls are booked ahead. Instances are not thread-safe.
 */
public final class RateBucket {

	private static final BigInteger NANOS_PER_MINUTE = BigInteger.valueOf(Arith.NANOS_PER_MINUTE);

	private final long ratePerMinute;

	private final long capacity;

	private long level;

	private long time;

	/** Fractional units carried forward, in units of 1 / {@code NANOS_PER_MINUTE}. */
	private long remainder;

	/**
	 * The highest level before a take among the bookings since the caller's clock last
	 * passed the bucket's time; {@link Long#MIN_VALUE} for none.
	 */
	private long peak = Long.MIN_VALUE;

	/** The peak's fraction, as {@link #remainder} is the level's. */
	private long peakRemainder;

	/**
	 * Since when the peak counts: the caller's time when it last passed the bucket's;
	 * {@link Long#MAX_VALUE} when unknown.
	 */
	private long peakSince;

	/** When the last take was, {@link Long#MIN_VALUE} when unknown. */
	private long lastTake = Long.MIN_VALUE;

	/**
	 * Creates a full bucket.
	 * @param ratePerMinute units added per minute, at least 1
	 * @param capacity the most units the bucket holds, at least 1
	 * @param now the current time in nanoseconds
	 */
	public RateBucket(long ratePerMinute, long capacity, long now) {
		if (ratePerMinute < 1 || capacity < 1) {
			throw new IllegalArgumentException(
					"Rate and capacity must be positive: rate=" + ratePerMinute + ", capacity=" + capacity);
		}
		this.ratePerMinute = ratePerMinute;
		this.capacity = capacity;
		this.level = capacity;
		this.time = now;
		this.peakSince = now;
	}

	/**
	 * Returns this bucket under other limits: its stored level (at most the new
	 * capacity), time, remainder and last take are kept, and its peak while the capacity
	 * is the same (the room above it is). Under another capacity the peak is not known
	 * (the bookings ahead waited under the old one), so nothing is given back ahead of
	 * them while they last. The shared store does the same.
	 * @param ratePerMinute units added per minute
	 * @param capacity the most units the bucket holds
	 * @return the bucket under those limits
	 */
	public RateBucket withLimits(long ratePerMinute, long capacity) {
		RateBucket bucket = new RateBucket(ratePerMinute, capacity, this.time);
		bucket.level = Math.min(this.level, capacity);
		bucket.remainder = this.remainder;
		bucket.lastTake = this.lastTake;
		if (capacity == this.capacity) {
			bucket.peak = this.peak;
			bucket.peakRemainder = this.peakRemainder;
			bucket.peakSince = this.peakSince;
		}
		else {
			bucket.peak = capacity;
			bucket.peakRemainder = 0;
			bucket.peakSince = Long.MAX_VALUE;
		}
		return bucket;
	}

	public long ratePerMinute() {
		return this.ratePerMinute;
	}

	public long capacity() {
		return this.capacity;
	}

	/**
	 * Returns the level at the given time. Reads change nothing: what a bucket holds
	 * later does not depend on who looked at it before (its limits may change between).
	 * @param now the current time
	 * @return the units available now (negative while in debt)
	 */
	public long level(long now) {
		return refilledLevel(now);
	}

	/**
	 * Returns how long from {@code now} until the bucket can take {@code units}: until it
	 * holds them, or, for a call larger than the capacity, until it is full.
	 * @param units the units wanted
	 * @param now the current time
	 * @return nanoseconds to wait, 0 when the units can be taken now
	 */
	public long nanosUntil(long units, long now) {
		return nanosUntil(units, 0, now);
	}

	/**
	 * Returns how long from {@code now} until the bucket can take {@code units} and keep
	 * {@code floor} units after them (or, for a call that large, until it is full).
	 * @param units the units wanted
	 * @param floor the units that must remain
	 * @param now the current time
	 * @return nanoseconds to wait, 0 when the units can be taken now
	 */
	public long nanosUntil(long units, long floor, long now) {
		return nanosUntilLevel(Math.min(Arith.saturatedAdd(units, floor), this.capacity), now);
	}

	/**
	 * Takes units at the given time, going into debt if the level is short. A store
	 * brings the bucket to its clock first ({@link #advance}), as it does before every
	 * write.
	 * @param units the units to take
	 * @param at when the units are taken (may lie ahead of the caller's clock)
	 */
	public void take(long units, long at) {
		refill(at);
		this.lastTake = at;
		if (this.level > this.peak || (this.level == this.peak && this.remainder > this.peakRemainder)) {
			this.peak = this.level;
			this.peakRemainder = this.remainder;
		}
		this.level = Arith.saturatedAdd(this.level, -units);
	}

	/**
	 * Gives units back, never beyond the capacity, nor, while calls are booked ahead,
	 * beyond the capacity above the fullest level one of them waited for.
	 * @param units the units to give back
	 * @param now the current time
	 */
	public void give(long units, long now) {
		give(units, Long.MIN_VALUE, now);
	}

	/**
	 * Gives back the units of a call the provider never saw, taken at a known time: whole
	 * (up to the capacity) when no later time took any; none when taken before the peak
	 * began to count (a take since may have found the bucket full, which the units would
	 * have overflowed); else no more than the capacity above the peak. Units whose time
	 * is unknown (a refund from usage) come back as {@link #give(long, long)} says.
	 * @param units the units to give back
	 * @param takenAt when they were taken, {@link Long#MIN_VALUE} if unknown
	 * @param now the current time
	 */
	public void give(long units, long takenAt, long now) {
		advance(now);
		long given = units;
		long fraction = 0;
		boolean known = takenAt != Long.MIN_VALUE;
		boolean last = known && takenAt == this.lastTake;
		if (known && !last && takenAt < this.peakSince) {
			given = 0;
		}
		else if ((known || this.time > now) && !last) {
			// the room above the peak, whole units and a fraction; none without a peak
			// (the bookings ahead are unknown)
			long room = (this.peak == Long.MIN_VALUE) ? 0 : this.capacity - this.peak;
			long roomFraction = 0;
			if (room > 0 && this.peakRemainder > 0) {
				room--;
				roomFraction = Arith.NANOS_PER_MINUTE - this.peakRemainder;
			}
			if (units > room) {
				given = Math.max(0, room);
				fraction = roomFraction;
			}
			this.peak += given;
			this.peakRemainder += fraction;
			if (this.peakRemainder >= Arith.NANOS_PER_MINUTE) {
				this.peak++;
				this.peakRemainder -= Arith.NANOS_PER_MINUTE;
			}
		}
		long raised = Arith.saturatedAdd(this.level, given);
		long carried = this.remainder + fraction;
		if (carried >= Arith.NANOS_PER_MINUTE) {
			raised = Arith.saturatedAdd(raised, 1);
			carried -= Arith.NANOS_PER_MINUTE;
		}
		if (raised >= this.capacity) {
			this.level = this.capacity;
			this.remainder = 0;
		}
		else {
			this.level = raised;
			this.remainder = carried;
		}
	}

	/**
	 * Lowers the level to at most the given value; never raises it.
	 * @param maxLevel the highest level allowed
	 * @param now the current time
	 */
	public void lowerTo(long maxLevel, long now) {
		advance(now);
		if (maxLevel < this.level || (maxLevel == this.level && this.remainder > 0)) {
			this.level = maxLevel;
			this.remainder = 0;
		}
	}

	/**
	 * Returns how long from {@code now} until the bucket is full again.
	 * @param now the current time
	 * @return nanoseconds until full
	 */
	public long nanosUntilFull(long now) {
		return nanosUntilLevel(this.capacity, now);
	}

	/** How long from {@code now} until the level reaches {@code need}; reads only. */
	private long nanosUntilLevel(long need, long now) {
		long level = refilledLevel(now);
		long base = Math.max(0, this.time - now);
		if (level >= need) {
			return base;
		}
		// time t such that (t * rate + remainder) / NANOS_PER_MINUTE >= deficit
		long deficit = need - level;
		long remainder = refilledRemainder(now);
		long nanos;
		if (Math.multiplyHigh(deficit, Arith.NANOS_PER_MINUTE) == 0 && deficit * Arith.NANOS_PER_MINUTE >= 0) {
			nanos = Arith.mulDivCeil(Math.max(0, deficit * Arith.NANOS_PER_MINUTE - remainder), 1, this.ratePerMinute);
		}
		else {
			// a deficit of more than about 150 million units: exactly, in big numbers
			BigInteger[] qr = BigInteger.valueOf(deficit)
				.multiply(NANOS_PER_MINUTE)
				.subtract(BigInteger.valueOf(remainder))
				.divideAndRemainder(BigInteger.valueOf(this.ratePerMinute));
			BigInteger ceiling = (qr[1].signum() > 0) ? qr[0].add(BigInteger.ONE) : qr[0];
			nanos = (ceiling.bitLength() < 63) ? ceiling.longValue() : Long.MAX_VALUE;
		}
		return Arith.saturatedAdd(base, nanos);
	}

	/**
	 * Brings the bucket to the caller's clock before a write: refills until it, and once
	 * it has passed the bucket's time, no booking lies ahead and the peak is forgotten. A
	 * store calls it before it takes; giving back and lowering call it themselves.
	 * @param now the current time
	 */
	public void advance(long now) {
		if (now >= this.time) {
			this.peak = Long.MIN_VALUE;
			this.peakRemainder = 0;
			this.peakSince = now;
		}
		refill(now);
	}

	private void refill(long now) {
		if (now <= this.time) {
			// Time that did not advance (or a booking ahead of now) adds nothing.
			return;
		}
		long level = refilledLevel(now);
		this.remainder = refilledRemainder(now);
		this.level = level;
		this.time = now;
	}

	/** The level refill gives at {@code now}, not kept. */
	private long refilledLevel(long now) {
		long total = refilledTotal(now);
		if (total < 0) {
			return this.level;
		}
		if (total == Long.MAX_VALUE) {
			BigInteger added = bigRefill(now)[0];
			return (added.compareTo(BigInteger.valueOf(this.capacity).subtract(BigInteger.valueOf(this.level))) >= 0)
					? this.capacity : this.level + added.longValue();
		}
		long added = total / Arith.NANOS_PER_MINUTE;
		return (added >= this.capacity - this.level) ? this.capacity : this.level + added;
	}

	/** The remainder refill leaves at {@code now}, not kept. */
	private long refilledRemainder(long now) {
		long total = refilledTotal(now);
		if (total < 0) {
			return (now > this.time) ? 0 : this.remainder;
		}
		if (total == Long.MAX_VALUE) {
			BigInteger[] refill = bigRefill(now);
			return (refill[0]
				.compareTo(BigInteger.valueOf(this.capacity).subtract(BigInteger.valueOf(this.level))) >= 0) ? 0
						: refill[1].longValue();
		}
		long added = total / Arith.NANOS_PER_MINUTE;
		return (added >= this.capacity - this.level) ? 0 : total % Arith.NANOS_PER_MINUTE;
	}

	/**
	 * The refill since the bucket's time with its remainder, in units of 1 / minute; -1
	 * when none is added: time that did not advance (or a booking ahead of now), or a
	 * full bucket (whose remainder is then dropped); {@link Long#MAX_VALUE} when it does
	 * not fit a long (billions a minute over seconds), for {@link #bigRefill}.
	 */
	private long refilledTotal(long now) {
		if (now <= this.time || this.level >= this.capacity) {
			return -1;
		}
		long elapsed = now - this.time;
		long product = elapsed * this.ratePerMinute;
		if (Math.multiplyHigh(elapsed, this.ratePerMinute) != 0 || product < 0
				|| product >= Long.MAX_VALUE - this.remainder) {
			return Long.MAX_VALUE;
		}
		return product + this.remainder;
	}

	/** The units a refill too large for a long adds, and the remainder it leaves. */
	private BigInteger[] bigRefill(long now) {
		return BigInteger.valueOf(now - this.time)
			.multiply(BigInteger.valueOf(this.ratePerMinute))
			.add(BigInteger.valueOf(this.remainder))
			.divideAndRemainder(NANOS_PER_MINUTE);
	}

	@Override
	public String toString() {
		return "RateBucket[rate=" + this.ratePerMinute + "/min, capacity=" + this.capacity + ", level=" + this.level
				+ "]";
	}

}
