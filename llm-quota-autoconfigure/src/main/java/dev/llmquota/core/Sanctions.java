package dev.llmquota.core;

import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.Map;

import dev.llmquota.core.kernel.Arith;

/**
 * What the provider imposed on a pool or an account beyond its buckets: rate-limit
 * penalties per dimension (nothing admitted until they pass) and an administrative
 * exhaustion (calls fail fast, one probe now and then where no reset is known).
 * Thread-safe.
 */
final class Sanctions {

	private final Map<Dimension, Long> penalties = new EnumMap<>(Dimension.class);

	/**
	 * The latest end of any penalty: while one is in force, the latest one is (ends only
	 * move later), so every call reads this instead of the map, without the lock.
	 */
	private volatile long latestPenaltyEnd = Long.MIN_VALUE;

	/**
	 * Written under the lock; volatile so that every call, which finds none nearly
	 * always, reads it without the lock.
	 */
	private volatile Exhaustion exhaustion;

	/**
	 * An administrative quota reported spent.
	 *
	 * @param dimension the dimension concerned, or {@code null} for a billing answer
	 * @param reason what the provider said, for people
	 * @param until when the quota comes back, by the wall clock when the provider said
	 * so, or {@code null} if unknown (then probes)
	 * @param untilNanos the monotonic time it comes back, where {@code until} is known:
	 * what ends the exhaustion, so a wall clock that steps meanwhile neither holds the
	 * calls longer nor lets them go early
	 * @param nextProbe the monotonic time the next probe call may go, where the reset is
	 * unknown
	 * @param since the monotonic time the provider said so
	 */
	record Exhaustion(Dimension dimension, String reason, Instant until, long untilNanos, long nextProbe, long since) {

		/**
		 * An exhaustion that ends when its reset comes, a wait from now.
		 * @param until the reset by the wall clock now, or {@code null} if unknown
		 */
		static Exhaustion until(Dimension dimension, String reason, Instant until, long now, Instant wallNow,
				long nextProbe) {
			return after(dimension, reason, (until != null) ? nanosUntil(wallNow, until) : -1, now, wallNow, nextProbe);
		}

		/**
		 * An exhaustion that ends after a wait.
		 * @param waitNanos the wait until its reset, or -1 if unknown
		 */
		static Exhaustion after(Dimension dimension, String reason, long waitNanos, long now, Instant wallNow,
				long nextProbe) {
			if (waitNanos < 0) {
				return new Exhaustion(dimension, reason, null, Long.MAX_VALUE, nextProbe, now);
			}
			return new Exhaustion(dimension, reason, wallNow.plusNanos(waitNanos), Arith.saturatedAdd(now, waitNanos),
					nextProbe, now);
		}

		private static long nanosUntil(Instant wallNow, Instant until) {
			if (!until.isAfter(wallNow)) {
				return 0;
			}
			try {
				return Duration.between(wallNow, until).toNanos();
			}
			catch (ArithmeticException ex) {
				return Long.MAX_VALUE;
			}
		}

		/**
		 * Returns when the quota comes back by the wall clock now, or {@code null} if
		 * unknown.
		 */
		Instant comesBack(long now, Instant wallNow) {
			return (this.until != null) ? wallNow.plusNanos(Math.max(0, this.untilNanos - now)) : null;
		}

	}

	/**
	 * Holds calls until a time.
	 * @param dimension what the provider's refusal named, or {@code null} if nothing: the
	 * penalty holds all the same, and names no dimension
	 * @param untilNanos the monotonic end
	 */
	synchronized void penalize(Dimension dimension, long untilNanos) {
		if (dimension != null) {
			this.penalties.merge(dimension, untilNanos, Math::max);
		}
		this.latestPenaltyEnd = Math.max(this.latestPenaltyEnd, untilNanos);
	}

	/**
	 * Returns the latest end of a penalty in force, or {@link Long#MIN_VALUE} if none is
	 * (a monotonic time may read negative: 0 is a time like any other).
	 */
	long penaltyEnd(long now) {
		long end = this.latestPenaltyEnd;
		return (end > now) ? end : Long.MIN_VALUE;
	}

	/**
	 * Returns the dimension whose penalty lasts longest now, of those a refusal named, or
	 * {@code null}.
	 */
	synchronized Dimension penalized(long now) {
		Dimension longest = null;
		long end = now;
		for (Map.Entry<Dimension, Long> penalty : this.penalties.entrySet()) {
			if (penalty.getValue() > end) {
				end = penalty.getValue();
				longest = penalty.getKey();
			}
		}
		return longest;
	}

	synchronized void exhaust(Exhaustion exhaustion) {
		this.exhaustion = exhaustion;
	}

	/** Returns the exhaustion in force, clearing one whose reset has passed. */
	Exhaustion exhaustion(long now) {
		return (this.exhaustion != null) ? exhaustionLocked(now) : null;
	}

	private synchronized Exhaustion exhaustionLocked(long now) {
		if (this.exhaustion != null && this.exhaustion.until() != null && now >= this.exhaustion.untilNanos()) {
			this.exhaustion = null;
		}
		return this.exhaustion;
	}

	/**
	 * Lets one probe call through if one is due.
	 * @return whether the caller may send the probe
	 */
	synchronized boolean takeProbe(long now, long intervalNanos) {
		if (this.exhaustion == null || this.exhaustion.until() != null || now < this.exhaustion.nextProbe()) {
			return false;
		}
		this.exhaustion = new Exhaustion(this.exhaustion.dimension(), this.exhaustion.reason(), null, Long.MAX_VALUE,
				now + intervalNanos, this.exhaustion.since());
		return true;
	}

	/** Whether a probe call may go now (without taking it). */
	synchronized boolean probeDue(long now) {
		return this.exhaustion != null && this.exhaustion.until() == null && now >= this.exhaustion.nextProbe();
	}

	synchronized boolean clearExhaustion() {
		boolean had = this.exhaustion != null;
		this.exhaustion = null;
		return had;
	}

	/**
	 * Ends an exhaustion because a call succeeded, but only a call admitted after the
	 * provider said the quota was spent (a probe): an older call's success proves
	 * nothing.
	 * @return whether it ended one
	 */
	boolean succeeded(long admittedAt) {
		return this.exhaustion != null && succeededLocked(admittedAt);
	}

	private synchronized boolean succeededLocked(long admittedAt) {
		if (this.exhaustion != null && admittedAt >= this.exhaustion.since()) {
			this.exhaustion = null;
			return true;
		}
		return false;
	}

	synchronized QuotaState state(long now) {
		if (exhaustion(now) != null) {
			return QuotaState.EXHAUSTED;
		}
		return (penaltyEnd(now) > now) ? QuotaState.THROTTLED : QuotaState.OK;
	}

}
