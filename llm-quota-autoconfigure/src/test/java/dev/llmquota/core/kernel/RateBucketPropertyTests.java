package dev.llmquota.core.kernel;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random sequences of take, refund, lower and clock steps against a reference bucket in
 * exact rational arithmetic.
 */
class RateBucketPropertyTests {

	private static final BigInteger N = BigInteger.valueOf(Arith.NANOS_PER_MINUTE);

	@ParameterizedTest(name = "seed {0}")
	@MethodSource("dev.llmquota.core.Seeds#seeds")
	void matchesExactReferenceAndNeverExceedsCapacity(long seed) {
		SplittableRandom random = new SplittableRandom(seed);
		long rate = rate(random);
		long capacity = capacity(random, rate);
		long now = random.nextLong(1_000_000_000_000L);
		RateBucket bucket = new RateBucket(rate, capacity, now);
		Reference reference = new Reference(rate, capacity);
		List<long[]> charges = new ArrayList<>();
		for (int step = 0; step < 400; step++) {
			int op = random.nextInt(10);
			if (op < 4) {
				now += random.nextLong(1 + random.nextLong(Arith.NANOS_PER_MINUTE / 10));
				reference.refill(now);
			}
			else if (op < 7) {
				long units = 1 + random.nextLong(capacity + 1);
				if (bucket.nanosUntil(units, now) == 0) {
					bucket.take(units, now);
					reference.take(units, now);
					if (units <= capacity) {
						charges.add(new long[] { now, units });
					}
				}
			}
			else if (op < 9) {
				long units = random.nextLong(capacity + 1);
				bucket.give(units, now);
				reference.give(units, now);
				charges.add(new long[] { now, -units });
			}
			else {
				long max = random.nextLong(-capacity, capacity + 1);
				bucket.lowerTo(max, now);
				reference.lowerTo(max, now);
			}
			long level = bucket.level(now);
			assertThat(level).as("seed %d step %d: level within capacity", seed, step).isLessThanOrEqualTo(capacity);
			assertThat(level).as("seed %d step %d: level equals the exact reference", seed, step)
				.isEqualTo(reference.floorLevel());
			long wanted = Math.min(capacity, Math.max(1, level + 1 + random.nextLong(capacity)));
			long wait = bucket.nanosUntil(wanted, now);
			if (level < wanted) {
				assertThat(wait).as("seed %d step %d: waiting for more units", seed, step).isPositive();
				assertThat(bucket.level(now + wait))
					.as("seed %d step %d: the units are there after the wait", seed, step)
					.isGreaterThanOrEqualTo(wanted);
				assertThat(bucket.level(now + wait - 1)).as("seed %d step %d: and not a nanosecond before", seed, step)
					.isLessThan(wanted);
			}
		}
		assertWindowBound(seed, charges, rate, capacity);
	}

	/**
	 * A bucket of a billion units a minute, emptied, refills at its rate and says how
	 * long a call waits: ten seconds' refill (10^10 ns x 10^9 a minute) does not fit a
	 * long, and read as full, over-admitting 833 million units, and a wait for 200
	 * million read as never.
	 */
	@org.junit.jupiter.api.Test
	void aBucketOfBillionsRefillsAndWaitsExactly() {
		long rate = 1_000_000_000L;
		RateBucket bucket = new RateBucket(rate, rate, 0);
		bucket.take(rate, 0);
		assertThat(bucket.level(10_000_000_000L)).isEqualTo(166_666_666L);
		assertThat(bucket.nanosUntil(200_000_000L, 0)).isEqualTo(12_000_000_000L);
		bucket.advance(10_000_000_000L);
		assertThat(bucket.level(10_000_000_000L)).isEqualTo(166_666_666L);
		assertThat(bucket.level(70_000_000_000L)).isEqualTo(rate);
	}

	/**
	 * Calls booked, some cancelled before their start, which another bucket may put after
	 * their take on this one (the provider never saw them; a refund from usage is another
	 * matter): every booking that stands found its units in the exact timeline of the
	 * bookings that stand, whatever the cancelled ones gave back.
	 */
	@ParameterizedTest(name = "seed {0}")
	@MethodSource("dev.llmquota.core.Seeds#seeds")
	void givingBackCancelledCallsNeverLetsALaterBookingTakeUnitsTheTimelineLacks(long seed) {
		SplittableRandom random = new SplittableRandom(seed);
		long rate = rate(random);
		long capacity = capacity(random, rate);
		long start = random.nextLong(1_000_000_000_000L);
		long now = start;
		RateBucket bucket = new RateBucket(rate, capacity, now);
		// taken at, units, cancelled (1) or standing (0), the call's start
		List<long[]> bookings = new ArrayList<>();
		for (int step = 0; step < 200; step++) {
			int op = random.nextInt(10);
			if (op < 3) {
				now += random.nextLong(1 + random.nextLong(Arith.NANOS_PER_MINUTE / 20));
			}
			else if (op < 7) {
				long units = 1 + random.nextLong(capacity);
				long at = now + bucket.nanosUntil(units, now);
				// as a store takes
				bucket.advance(now);
				bucket.take(units, at);
				long later = random.nextBoolean() ? 0 : random.nextLong(Arith.NANOS_PER_MINUTE / 10);
				bookings.add(new long[] { at, units, 0, at + later });
			}
			else {
				long instant = now;
				List<long[]> unstarted = bookings.stream().filter((b) -> b[2] == 0 && b[3] > instant).toList();
				if (!unstarted.isEmpty()) {
					long[] cancelled = unstarted.get(random.nextInt(unstarted.size()));
					bucket.give(cancelled[1], cancelled[0], now);
					cancelled[2] = 1;
				}
			}
			assertTimelineHolds(seed, step, bookings, rate, capacity, start);
		}
	}

	/** A rate per minute: a few requests, or millions of tokens. */
	static long rate(SplittableRandom random) {
		// now and then an account of billions a minute, whose refill over seconds does
		// not fit a long in nanoseconds times units
		return 1 + random.nextLong(switch (random.nextInt(5)) {
			case 0, 1 -> 600;
			case 2, 3 -> 3_000_000;
			default -> 20_000_000_000L;
		});
	}

	/** A capacity of up to a minute of the rate, and from 1. */
	static long capacity(SplittableRandom random, long rate) {
		return 1 + random.nextLong(Math.max(1, rate / (1 + random.nextInt(60))) + 1);
	}

	private static void assertTimelineHolds(long seed, int step, List<long[]> bookings, long rate, long capacity,
			long start) {
		BigInteger cap = BigInteger.valueOf(capacity).multiply(N);
		BigInteger level = cap;
		long time = start;
		List<long[]> standing = bookings.stream()
			.filter((b) -> b[2] == 0)
			.sorted((x, y) -> Long.compare(x[0], y[0]))
			.toList();
		for (long[] booking : standing) {
			level = level.add(BigInteger.valueOf(booking[0] - time).multiply(BigInteger.valueOf(rate))).min(cap);
			time = booking[0];
			assertThat(level).as("seed %d step %d: the level before %d units at %d", seed, step, booking[1], booking[0])
				.isGreaterThanOrEqualTo(BigInteger.valueOf(booking[1]).multiply(N));
			level = level.subtract(BigInteger.valueOf(booking[1]).multiply(N));
		}
	}

	/**
	 * Over any window of length W the units charged, net of refunds, never exceed
	 * capacity + rate x W.
	 */
	private static void assertWindowBound(long seed, List<long[]> charges, long rate, long capacity) {
		for (int i = 0; i < charges.size(); i++) {
			long net = 0;
			for (int j = i; j < charges.size(); j++) {
				net += charges.get(j)[1];
				long window = charges.get(j)[0] - charges.get(i)[0];
				long allowed = capacity + Arith.mulDivCeil(window, rate, Arith.NANOS_PER_MINUTE);
				assertThat(net).as("seed %d: units charged in a window of %d ns", seed, window)
					.isLessThanOrEqualTo(allowed);
			}
		}
	}

	/** A bucket whose level is an exact fraction, in units of 1 / NANOS_PER_MINUTE. */
	private static final class Reference {

		private final BigInteger rate;

		private final BigInteger capacity;

		private BigInteger level;

		private Long time;

		Reference(long rate, long capacity) {
			this.rate = BigInteger.valueOf(rate);
			this.capacity = BigInteger.valueOf(capacity).multiply(N);
			this.level = this.capacity;
		}

		void refill(long now) {
			if (this.time != null && now > this.time) {
				this.level = this.level.add(BigInteger.valueOf(now - this.time).multiply(this.rate)).min(this.capacity);
			}
			this.time = (this.time == null) ? now : Math.max(this.time, now);
		}

		void take(long units, long now) {
			refill(now);
			this.level = this.level.subtract(BigInteger.valueOf(units).multiply(N));
		}

		void give(long units, long now) {
			refill(now);
			this.level = this.level.add(BigInteger.valueOf(units).multiply(N)).min(this.capacity);
		}

		void lowerTo(long max, long now) {
			refill(now);
			this.level = this.level.min(BigInteger.valueOf(max).multiply(N));
		}

		long floorLevel() {
			BigInteger[] qr = this.level.divideAndRemainder(N);
			BigInteger floor = (qr[1].signum() < 0) ? qr[0].subtract(BigInteger.ONE) : qr[0];
			return floor.longValueExact();
		}

	}

}
