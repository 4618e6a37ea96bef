package dev.llmquota.store;

import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import dev.llmquota.core.Booking;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.Charge;
import dev.llmquota.core.BookingRequest;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.QuotaStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What every {@link QuotaStore} must do; a store's tests extend this class. Bucket keys
 * are unique per test instance so a shared server needs no cleanup between tests.
 */
public abstract class QuotaStoreContractTests {

	/** One second in nanoseconds. */
	protected static final long SECOND = 1_000_000_000L;

	private static final ZoneId UTC = ZoneId.of("UTC");

	protected final String prefix = "test-" + System.nanoTime() + "-";

	protected QuotaStore store;

	protected long now = 1_000 * SECOND;

	protected Instant wall = Instant.parse("2026-11-30T12:00:00Z");

	/**
	 * Creates the store under test.
	 * @return a new store
	 */
	protected abstract QuotaStore createStore();

	@BeforeEach
	void createTheStore() {
		this.store = createStore();
	}

	@AfterEach
	void closeTheStore() {
		this.store.close();
	}

	/** A rate bucket of 60 units per minute (one per second) holding at most 10. */
	protected BucketSpec rate(String name) {
		return new BucketSpec(this.prefix + name, BucketSpec.Scope.POOL, Dimension.TOKENS_PER_MINUTE, 60, 10, UTC);
	}

	protected BucketSpec daily(String name, long limit) {
		return new BucketSpec(this.prefix + name, BucketSpec.Scope.ACCOUNT, Dimension.REQUESTS_PER_DAY, limit, limit,
				UTC);
	}

	protected void advance(Duration duration) {
		this.now += duration.toNanos();
		this.wall = this.wall.plus(duration);
	}

	protected long remaining(BucketSpec bucket) {
		return this.store.state(bucket, this.now, this.wall).remaining();
	}

	private Booking book(long latestStart, Charge... charges) {
		return this.store.book(List.of(charges), this.now, this.wall, latestStart);
	}

	private Booking book(long latestStart, BookingRequest.Reserve reserve, Charge... charges) {
		return this.store.book(new BookingRequest(List.of(charges), List.of(), List.of(), reserve), this.now, this.wall,
				latestStart);
	}

	@Test
	void aNewBucketStartsFull() {
		assertThat(remaining(rate("a"))).isEqualTo(10);
		assertThat(this.store.state(rate("a"), this.now, this.wall).capacity()).isEqualTo(10);
	}

	@Test
	void booksAtOnceWhenEveryBucketHasRoom() {
		Booking booking = book(this.now, new Charge(rate("a"), 4), new Charge(rate("b"), 10));
		assertThat(booking).isInstanceOf(Booking.Booked.class);
		assertThat(((Booking.Booked) booking).start()).isEqualTo(this.now);
		assertThat(remaining(rate("a"))).isEqualTo(6);
		assertThat(remaining(rate("b"))).isZero();
	}

	@Test
	void refusesNamingTheBindingBucketAndTakesNothingFromAny() {
		book(this.now, new Charge(rate("b"), 8));
		Booking booking = book(this.now, new Charge(rate("a"), 5), new Charge(rate("b"), 5));
		assertThat(booking).isInstanceOf(Booking.Refused.class);
		Booking.Refused refused = (Booking.Refused) booking;
		assertThat(refused.bucket()).isEqualTo(rate("b"));
		assertThat(refused.waitNanos()).isEqualTo(3 * SECOND);
		assertThat(remaining(rate("a"))).isEqualTo(10);
		assertThat(remaining(rate("b"))).isEqualTo(2);
	}

	@Test
	void refillsContinuouslyUpToCapacity() {
		book(this.now, new Charge(rate("a"), 10));
		advance(Duration.ofMillis(2_500));
		assertThat(remaining(rate("a"))).isEqualTo(2);
		advance(Duration.ofMillis(500));
		assertThat(remaining(rate("a"))).isEqualTo(3);
		advance(Duration.ofHours(1));
		assertThat(remaining(rate("a"))).isEqualTo(10);
	}

	@Test
	void booksAheadAtTheEarliestTimeEveryBucketAllowsAndOrdersLaterBookingsAfterIt() {
		book(this.now, new Charge(rate("a"), 10));
		Booking first = book(Long.MAX_VALUE, new Charge(rate("a"), 4));
		assertThat(((Booking.Booked) first).start()).isEqualTo(this.now + 4 * SECOND);
		Booking second = book(Long.MAX_VALUE, new Charge(rate("a"), 1));
		assertThat(((Booking.Booked) second).start()).isEqualTo(this.now + 5 * SECOND);
		Booking tooLate = book(this.now + 5 * SECOND, new Charge(rate("a"), 1));
		assertThat(tooLate).isInstanceOf(Booking.Refused.class);
		assertThat(((Booking.Refused) tooLate).waitNanos()).isEqualTo(6 * SECOND);
	}

	@Test
	void aBookingAheadDoesNotHoldBackABucketThatHasRoom() {
		book(this.now, new Charge(rate("slow"), 10));
		Booking ahead = book(Long.MAX_VALUE, new Charge(rate("slow"), 4), new Charge(rate("roomy"), 1));
		assertThat(((Booking.Booked) ahead).start()).isEqualTo(this.now + 4 * SECOND);
		assertThat(book(this.now, new Charge(rate("roomy"), 9))).as("the roomy bucket's other 9 units, now")
			.isInstanceOf(Booking.Booked.class);
	}

	@Test
	void cancellingABookingGivesBackWhatItTook() {
		Booking booking = book(this.now, new Charge(rate("a"), 7), new Charge(daily("d", 5), 1));
		this.store.cancel((Booking.Booked) booking, this.now, this.wall);
		assertThat(remaining(rate("a"))).isEqualTo(10);
		assertThat(remaining(daily("d", 5))).isEqualTo(5);
	}

	@Test
	void aCallBookedAheadAndCancelledLeavesItsTurnToTheNextCall() {
		book(this.now, new Charge(rate("a"), 10));
		Booking ahead = book(Long.MAX_VALUE, new Charge(rate("a"), 5));
		assertThat(((Booking.Booked) ahead).start()).isEqualTo(this.now + 5 * SECOND);
		this.store.cancel((Booking.Booked) ahead, this.now, this.wall);
		Booking next = book(Long.MAX_VALUE, new Charge(rate("a"), 5));
		assertThat(((Booking.Booked) next).start()).isEqualTo(this.now + 5 * SECOND);
	}

	/**
	 * A call booked behind a cancelled one, and large enough to need the units the
	 * cancelled call left for it to refill, already counted them: 10 units at 0 s, 5
	 * booked for 5 s and cancelled, 10 booked for 15 s (a full bucket, from an empty one
	 * at 5 s). Another 5 units fit by 10 s (the bucket is full again by 15 s) or from 20
	 * s; in between, they and the 10 would take 15 units of a bucket of 10.
	 */
	@Test
	void aCancelledCallBookedAheadGivesNothingALargerCallBookedBehindItCounted() {
		book(this.now, new Charge(rate("a"), 10));
		Booking cancelled = book(Long.MAX_VALUE, new Charge(rate("a"), 5));
		Booking large = book(Long.MAX_VALUE, new Charge(rate("a"), 10));
		assertThat(((Booking.Booked) large).start()).isEqualTo(this.now + 15 * SECOND);
		this.store.cancel((Booking.Booked) cancelled, this.now, this.wall);
		long start = ((Booking.Booked) book(Long.MAX_VALUE, new Charge(rate("a"), 5))).start() - this.now;
		assertThat(start <= 10 * SECOND || start >= 20 * SECOND)
			.as("5 more units start at %d ms, when the bucket cannot hold them and the 10", start / 1_000_000)
			.isTrue();
	}

	/**
	 * Random calls booked on a bucket x, half of them also on a slow bucket that puts
	 * their start after their take on x, some cancelled before their start (or, for a
	 * call of x alone, refunded with no time of taking): every booking that stands found
	 * its units on x in the exact timeline of the bookings that stand.
	 */
	@Test
	void givingBackCancelledCallsNeverLetsALaterCallTakeUnitsTheTimelineLacks() {
		for (long seed = 0; seed < 12; seed++) {
			SplittableRandom random = new SplittableRandom(seed);
			long rate = 1 + random.nextLong(random.nextBoolean() ? 600 : 3_000_000);
			long capacity = 1 + random.nextLong(Math.max(1, rate / (1 + random.nextInt(60))) + 1);
			BucketSpec x = new BucketSpec(this.prefix + "timeline-" + seed, BucketSpec.Scope.POOL,
					Dimension.TOKENS_PER_MINUTE, rate, capacity, UTC);
			BucketSpec slow = new BucketSpec(this.prefix + "slow-" + seed, BucketSpec.Scope.POOL,
					Dimension.REQUESTS_PER_MINUTE, 60, 1, UTC);
			long start = this.now;
			// the bookings, and when x took their units
			List<Map.Entry<Booking.Booked, Long>> standing = new ArrayList<>();
			for (int step = 0; step < 80; step++) {
				int op = random.nextInt(10);
				if (op < 3) {
					// whole microseconds, Redis's grain
					advance(Duration.ofNanos(1_000 * random.nextLong(1 + random.nextLong(3_000_000))));
				}
				else if (op < 7) {
					Charge charge = new Charge(x, 1 + random.nextLong(capacity));
					Booking.Booked booked = (Booking.Booked) (random.nextBoolean() ? book(Long.MAX_VALUE, charge)
							: book(Long.MAX_VALUE, charge, new Charge(slow, 1)));
					standing.add(Map.entry(booked, takenAtNanos(booked.charges().get(0).takenAt())));
				}
				else {
					long instant = this.now;
					List<Map.Entry<Booking.Booked, Long>> unstarted = standing.stream()
						.filter((b) -> b.getKey().start() > instant)
						.toList();
					if (!unstarted.isEmpty()) {
						Map.Entry<Booking.Booked, Long> entry = unstarted.get(random.nextInt(unstarted.size()));
						Booking.Booked cancelled = entry.getKey();
						if (cancelled.charges().size() == 1 && random.nextInt(4) == 0) {
							this.store.adjust(x, -cancelled.charges().get(0).units(), this.now, this.wall);
						}
						else {
							this.store.cancel(cancelled, this.now, this.wall);
						}
						standing.removeIf((b) -> b == entry);
					}
				}
				assertTimelineHolds(seed, step, standing, rate, capacity, start);
			}
		}
	}

	/**
	 * A time of taking in this store's clock, in the test's nanoseconds.
	 * @param takenAt the time the store stamped a charge with
	 * @return the nanoseconds
	 */
	protected long takenAtNanos(long takenAt) {
		return takenAt;
	}

	private static void assertTimelineHolds(long seed, int step, List<Map.Entry<Booking.Booked, Long>> standing,
			long rate, long capacity, long start) {
		BigInteger perMinute = BigInteger.valueOf(60 * SECOND);
		BigInteger cap = BigInteger.valueOf(capacity).multiply(perMinute);
		BigInteger level = cap;
		long time = start;
		List<Map.Entry<Booking.Booked, Long>> inOrder = standing.stream().sorted(Map.Entry.comparingByValue()).toList();
		for (Map.Entry<Booking.Booked, Long> booking : inOrder) {
			level = level.add(BigInteger.valueOf(booking.getValue() - time).multiply(BigInteger.valueOf(rate)))
				.min(cap);
			time = booking.getValue();
			long units = booking.getKey().charges().get(0).units();
			assertThat(level).as("seed %d step %d: the level before %d units at %d", seed, step, units, time - start)
				.isGreaterThanOrEqualTo(BigInteger.valueOf(units).multiply(perMinute));
			level = level.subtract(BigInteger.valueOf(units).multiply(perMinute));
		}
	}

	/**
	 * A call whose fast bucket took its units at once and whose slow bucket booked it
	 * ahead, cancelled once the fast bucket had filled and emptied again: its units
	 * overflowed the full bucket and come back to no one. Exactly, without it: x full
	 * (10) from 0 s, 10 units waiting for a full x take it at 10 s, 2 units at 12 s; 8
	 * more fit only at 20 s.
	 */
	@Test
	void aCancelledCallsUnitsThatAFullBucketOverflowedComeBackToNoOne() {
		book(this.now, new Charge(rate("y"), 10));
		book(Long.MAX_VALUE, new Charge(rate("y"), 10));
		long start = this.now;
		Booking.Booked cancelled = (Booking.Booked) book(Long.MAX_VALUE, new Charge(rate("x"), 10),
				new Charge(rate("y"), 10));
		assertThat(cancelled.start()).as("x taken at once, y at 20 s").isEqualTo(start + 20 * SECOND);
		assertThat(((Booking.Booked) book(Long.MAX_VALUE, new Charge(rate("x"), 10))).start())
			.isEqualTo(start + 10 * SECOND);
		advance(Duration.ofSeconds(11));
		assertThat(((Booking.Booked) book(Long.MAX_VALUE, new Charge(rate("x"), 2))).start())
			.isEqualTo(start + 12 * SECOND);
		this.store.cancel(cancelled, this.now, this.wall);
		long next = ((Booking.Booked) book(Long.MAX_VALUE, new Charge(rate("x"), 8))).start() - start;
		assertThat(next).as("8 units at %d ms", next / 1_000_000).isGreaterThanOrEqualTo(20 * SECOND);
	}

	/**
	 * Limits changed while calls are booked ahead: what the bookings ahead waited for is
	 * no longer known in the new limits, and nothing is given back ahead of them.
	 */
	@Test
	void aRefundAfterTheLimitsChangedWhileCallsAreBookedAheadWaitsForThem() {
		BucketSpec small = rate("c");
		BucketSpec large = new BucketSpec(small.key(), BucketSpec.Scope.POOL, Dimension.TOKENS_PER_MINUTE, 60, 20, UTC);
		book(this.now, new Charge(small, 10));
		assertThat(((Booking.Booked) book(Long.MAX_VALUE, new Charge(small, 5))).start())
			.isEqualTo(this.now + 5 * SECOND);
		this.store.adjust(large, -3, this.now, this.wall);
		assertThat(((Booking.Booked) book(Long.MAX_VALUE, new Charge(large, 3))).start())
			.isEqualTo(this.now + 8 * SECOND);
	}

	/**
	 * Reading a bucket (its state, a wait, a refused booking) writes nothing: what it
	 * holds once its capacity grew is the same whether anyone looked at it before, in
	 * every store. The stores differed here: one saved the refill each read found, capped
	 * at the old capacity, the other saved nothing.
	 */
	@Test
	void readingABucketChangesNothingItsLimitsSeeOnceTheyGrow() {
		BucketSpec small = rate("a");
		BucketSpec large = new BucketSpec(small.key(), BucketSpec.Scope.POOL, Dimension.TOKENS_PER_MINUTE, 60, 20, UTC);
		BucketSpec unread = rate("b");
		BucketSpec unreadLarge = new BucketSpec(unread.key(), BucketSpec.Scope.POOL, Dimension.TOKENS_PER_MINUTE, 60,
				20, UTC);
		book(this.now, new Charge(small, 10));
		book(this.now, new Charge(unread, 10));
		advance(Duration.ofSeconds(30));
		assertThat(remaining(small)).isEqualTo(10);
		assertThat(this.store.nanosUntilAvailable(List.of(new Charge(small, 10)), this.now, this.wall)).isZero();
		BucketSpec day = daily("day", 1);
		book(this.now, new Charge(day, 1));
		assertThat(book(this.now, new Charge(small, 10), new Charge(day, 1))).isInstanceOf(Booking.Refused.class);
		assertThat(remaining(large)).isEqualTo(remaining(unreadLarge)).isEqualTo(20);
	}

	/**
	 * A change of limits in between does not make a store forget which take was the last:
	 * the last call, cancelled, still comes back whole.
	 */
	@Test
	void aCallCancelledAfterTheLimitsChangedGivesBackWhatItTookWhenNothingWasTakenSince() {
		BucketSpec small = rate("a");
		BucketSpec large = new BucketSpec(small.key(), BucketSpec.Scope.POOL, Dimension.TOKENS_PER_MINUTE, 60, 20, UTC);
		Booking booking = book(this.now, new Charge(small, 7));
		this.store.lowerTo(large, 20, this.now);
		advance(Duration.ofMillis(1));
		this.store.cancel((Booking.Booked) booking, this.now, this.wall);
		assertThat(remaining(small)).isEqualTo(10);
	}

	/**
	 * A rate that changes while calls are booked ahead leaves the room above the peak as
	 * it was (the capacity is the same): a call booked ahead and cancelled gives back
	 * what the calls booked behind it never counted, in every store.
	 */
	@Test
	void aCancelledCallBookedAheadGivesBackWhatNoLaterCallCountedAfterTheRateChanged() {
		BucketSpec slow = rate("a");
		BucketSpec fast = new BucketSpec(slow.key(), BucketSpec.Scope.POOL, Dimension.TOKENS_PER_MINUTE, 120, 10, UTC);
		book(this.now, new Charge(slow, 10));
		advance(Duration.ofSeconds(1));
		Booking.Booked cancelled = (Booking.Booked) book(Long.MAX_VALUE, new Charge(slow, 5));
		Booking.Booked behind = (Booking.Booked) book(Long.MAX_VALUE, new Charge(slow, 3));
		assertThat(behind.start()).isEqualTo(this.now + 7 * SECOND);
		this.store.lowerTo(fast, 10, this.now);
		this.store.cancel(cancelled, this.now, this.wall);
		assertThat(((Booking.Booked) book(Long.MAX_VALUE, new Charge(fast, 5))).start())
			.as("the cancelled call's 5 units, at the last booking's time")
			.isEqualTo(this.now + 7 * SECOND);
	}

	@Test
	void aRefundWhileCallsAreBookedAheadGoesToTheCallsBookedNext() {
		book(this.now, new Charge(rate("a"), 3));
		this.store.adjust(rate("a"), 7, this.now, this.wall);
		Booking ahead = book(Long.MAX_VALUE, new Charge(rate("a"), 2));
		assertThat(((Booking.Booked) ahead).start()).isEqualTo(this.now + 2 * SECOND);
		this.store.adjust(rate("a"), -2, this.now, this.wall);
		Booking next = book(Long.MAX_VALUE, new Charge(rate("a"), 2));
		assertThat(((Booking.Booked) next).start()).isEqualTo(this.now + 2 * SECOND);
	}

	@Test
	void aCallCancelledOnceTheClockMovedGivesBackWhatItTookWhenNothingWasTakenSince() {
		Booking booking = book(this.now, new Charge(rate("a"), 7));
		advance(Duration.ofMillis(1));
		this.store.cancel((Booking.Booked) booking, this.now, this.wall);
		assertThat(remaining(rate("a"))).isEqualTo(10);
	}

	@Test
	void aRefundNeverFillsABucketBeyondItsCapacity() {
		book(this.now, new Charge(rate("a"), 3));
		this.store.adjust(rate("a"), -50, this.now, this.wall);
		assertThat(remaining(rate("a"))).isEqualTo(10);
	}

	@Test
	void anUnderEstimateIsChargedIntoDebtAndDelaysLaterCalls() {
		book(this.now, new Charge(rate("a"), 5));
		this.store.adjust(rate("a"), 20, this.now, this.wall);
		assertThat(remaining(rate("a"))).isEqualTo(-15);
		assertThat(this.store.nanosUntilAvailable(List.of(new Charge(rate("a"), 1)), this.now, this.wall))
			.isEqualTo(16 * SECOND);
	}

	@Test
	void anOversizedCallIsBookedOnlyOnAFullBucketAndChargedInFull() {
		book(this.now, new Charge(rate("a"), 1));
		assertThat(book(this.now, new Charge(rate("a"), 25))).isInstanceOf(Booking.Refused.class);
		advance(Duration.ofSeconds(1));
		assertThat(book(this.now, new Charge(rate("a"), 25))).isInstanceOf(Booking.Booked.class);
		assertThat(remaining(rate("a"))).isEqualTo(-15);
	}

	@Test
	void loweringFromTheServerNeverRaisesTheLevel() {
		this.store.lowerTo(rate("a"), 4, this.now);
		assertThat(remaining(rate("a"))).isEqualTo(4);
		this.store.lowerTo(rate("a"), 9, this.now);
		assertThat(remaining(rate("a"))).isEqualTo(4);
		this.store.lowerTo(rate("a"), -3, this.now);
		assertThat(remaining(rate("a"))).isEqualTo(-3);
	}

	@Test
	void aDailyCounterRefusesUntilTheNextDayAndResetsThen() {
		BucketSpec day = daily("d", 2);
		book(this.now, new Charge(day, 2));
		Booking refused = book(Long.MAX_VALUE, new Charge(day, 1));
		assertThat(refused).isInstanceOf(Booking.Refused.class);
		assertThat(((Booking.Refused) refused).waitNanos()).isEqualTo(Duration.ofHours(12).toNanos());
		advance(Duration.ofHours(12));
		assertThat(book(this.now, new Charge(day, 1))).isInstanceOf(Booking.Booked.class);
		assertThat(remaining(day)).isEqualTo(1);
	}

	/**
	 * A call booked before midnight whose usage is charged after it: the charge counts on
	 * the new day (and a month's budget on the new month), in either store, whatever else
	 * was booked first; Redis put it on the day of the booking, which the next booking
	 * then wiped, unless another call had been booked on the new day before.
	 */
	@Test
	void aUsageChargedAfterMidnightCountsOnTheNewDay() {
		this.wall = Instant.parse("2026-11-30T23:59:50Z");
		BucketSpec day = new BucketSpec(this.prefix + "tokens-per-day", BucketSpec.Scope.ACCOUNT,
				Dimension.TOKENS_PER_DAY, 1_000, 1_000, UTC);
		BucketSpec month = new BucketSpec(this.prefix + "budget-per-month", BucketSpec.Scope.ACCOUNT,
				Dimension.BUDGET_PER_MONTH, 10_000_000, 10_000_000, UTC);
		Booking.Booked booked = (Booking.Booked) book(this.now, new Charge(day, 100), new Charge(month, 1_000));
		advance(Duration.ofSeconds(20));
		this.store.correct(booked, List.of(new Charge(day, 400), new Charge(month, 2_000_000)), this.now, this.wall);
		assertThat(remaining(day)).as("the new day's tokens left").isEqualTo(600);
		assertThat(remaining(month)).as("the new month's budget left").isEqualTo(8_000_000);
	}

	/**
	 * How long a batch call waits, read, keeps the interactive reserve back as its
	 * booking does: a Redis read left it out, said 0 and the booking was then refused, so
	 * the routes read a busy target as free.
	 */
	@Test
	void aBatchCallsWaitReadKeepsTheInteractiveReserveAsItsBookingDoes() {
		BookingRequest.Reserve interactive = new BookingRequest.Reserve(false, this.prefix + "interactive-wait", 0.2,
				30 * SECOND);
		BookingRequest.Reserve batch = new BookingRequest.Reserve(true, this.prefix + "interactive-wait", 0.2,
				30 * SECOND);
		book(this.now, interactive, new Charge(rate("a"), 9));
		assertThat(book(this.now, interactive, new Charge(rate("a"), 2))).as("an interactive call waits")
			.isInstanceOf(Booking.Refused.class);
		advance(Duration.ofSeconds(5));
		BookingRequest request = new BookingRequest(List.of(new Charge(rate("a"), 5)), List.of(), List.of(), batch);
		// 6 units, 2 of them the reserve: one more second for 5
		assertThat(this.store.nanosUntilAvailable(request, this.now, this.wall)).isEqualTo(SECOND);
		assertThat(book(this.now, batch, new Charge(rate("a"), 5))).isInstanceOf(Booking.Refused.class);
	}

	@Test
	void aDailyCounterIgnoresAWallClockJumpingBack() {
		BucketSpec day = daily("d", 1);
		book(this.now, new Charge(day, 1));
		this.wall = this.wall.minus(Duration.ofDays(2));
		assertThat(book(this.now, new Charge(day, 1))).isInstanceOf(Booking.Refused.class);
	}

	@Test
	void aBatchCallLeavesTheInteractiveReserveWhileInteractiveCallsWaitAndBorrowsItOtherwise() {
		BookingRequest.Reserve interactive = new BookingRequest.Reserve(false, this.prefix + "interactive-wait", 0.2,
				30 * SECOND);
		BookingRequest.Reserve batch = new BookingRequest.Reserve(true, this.prefix + "interactive-wait", 0.2,
				30 * SECOND);
		assertThat(book(this.now, interactive, new Charge(rate("a"), 10))).isInstanceOf(Booking.Booked.class);
		assertThat(book(this.now, interactive, new Charge(rate("a"), 1))).as("an interactive call waits")
			.isInstanceOf(Booking.Refused.class);
		advance(Duration.ofSeconds(10));
		assertThat(book(this.now, batch, new Charge(rate("a"), 8))).isInstanceOf(Booking.Booked.class);
		assertThat(remaining(rate("a"))).isEqualTo(2);
		Booking held = book(this.now, batch, new Charge(rate("a"), 1));
		assertThat(held).as("the last 2 of 10 are kept for interactive calls")
			.isEqualTo(new Booking.Refused(rate("a"), SECOND));
		assertThat(book(this.now, interactive, new Charge(rate("a"), 1))).as("interactive calls take the reserve")
			.isInstanceOf(Booking.Booked.class);
		advance(Duration.ofSeconds(30));
		assertThat(book(this.now, batch, new Charge(rate("a"), 10))).as("no interactive wait for 30 s: lent")
			.isInstanceOf(Booking.Booked.class);
	}

	@Test
	void timeThatDoesNotAdvanceAddsNothing() {
		book(this.now, new Charge(rate("a"), 10));
		this.now -= 5 * SECOND;
		assertThat(remaining(rate("a"))).isZero();
	}

}
