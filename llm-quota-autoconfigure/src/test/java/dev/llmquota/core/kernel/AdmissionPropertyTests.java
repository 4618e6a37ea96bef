package dev.llmquota.core.kernel;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The admission rules on their own, with plain books of {@link RateBucket}s and in-flight
 * bounds, driven by seeded random arrivals, releases and the wake-ups the rules ask for.
 * Each run is checked against the invariants both stores must keep, measured from the
 * buckets directly: the head is never delayed by a later call, identical calls of a class
 * are served in arrival order, an oversized call is admitted alone, no call waits past
 * its deadline, and no bound is exceeded.
 */
class AdmissionPropertyTests {

	private static final long SECOND = 1_000_000_000L;

	@ParameterizedTest(name = "seed {0}")
	@MethodSource("dev.llmquota.core.Seeds#seeds")
	void keepsTheInvariantsOfBothStores(long seed) {
		SplittableRandom random = new SplittableRandom(seed);
		long now = random.nextLong(1_000_000 * SECOND);
		Ledger books = new Ledger(random, now);
		List<Call> calls = new ArrayList<>();
		List<Call> inFlight = new ArrayList<>();
		long nextArrival = now;
		for (int step = 0; step < 600; step++) {
			long nextRelease = Long.MAX_VALUE;
			for (Call call : inFlight) {
				nextRelease = Math.min(nextRelease, call.endsAt);
			}
			now = Math.max(now, Math.min(nextArrival, Math.min(nextRelease, books.wakeAt)));
			books.wakeAt = Long.MAX_VALUE;
			for (int i = inFlight.size() - 1; i >= 0; i--) {
				Call call = inFlight.get(i);
				if (call.endsAt <= now) {
					inFlight.remove(i);
					for (int g = 0; g < call.gates(); g++) {
						books.gates[g].inUse -= call.weights[g];
					}
				}
			}
			if (nextArrival <= now) {
				Call call = books.newCall(random, calls.size(), now);
				calls.add(call);
				books.queues.get(call.batch ? 1 : 0).addLast(call);
				nextArrival = now + random.nextLong(2 * SECOND);
			}
			Call first = books.firstWaiting();
			long firstWaitBefore = (first != null) ? books.wait(first, now) : 0;
			Admission.runHere(books.queues, books, now);
			if (first != null && first.state == State.WAITING) {
				assertThat(books.wait(first, now))
					.as("seed %d step %d: the head's earliest admission is never pushed back", seed, step)
					.isLessThanOrEqualTo(firstWaitBefore);
			}
			for (Bound gate : books.gates) {
				assertThat(gate.inUse).as("seed %d: a bound is never exceeded", seed)
					.isLessThanOrEqualTo(gate.capacity);
			}
			for (Call call : books.admittedNow) {
				call.endsAt = now + 1 + random.nextLong(5 * SECOND);
				inFlight.add(call);
			}
			books.admittedNow.clear();
		}
		for (Call call : calls) {
			if (call.state == State.ADMITTED) {
				assertThat(call.decidedAt).as("seed %d: admitted by its deadline", seed)
					.isLessThanOrEqualTo(call.deadline);
			}
			if (call.failure == Admission.Failure.TIMED_OUT) {
				assertThat(call.decidedAt).as("seed %d: timed out at its deadline, not later", seed)
					.isEqualTo(call.deadline);
			}
		}
		for (Call a : calls) {
			for (Call b : calls) {
				if (a.id < b.id && a.batch == b.batch && a.sameDemand(b) && a.state == State.ADMITTED
						&& b.state == State.ADMITTED) {
					assertThat(a.decidedAt).as("seed %d: identical calls of a class in arrival order", seed)
						.isLessThanOrEqualTo(b.decidedAt);
				}
			}
		}
		assertThat(books.oversizedAdmitted + books.admitted).as("seed %d: calls were admitted", seed).isPositive();
	}

	@Test
	void aCallLargerThanABoundIsAdmittedAloneAndHoldsAllOfIt() {
		SplittableRandom random = new SplittableRandom(1);
		Ledger books = new Ledger(random, 0);
		Call small = books.call(0, false, new long[] { 1, 1 }, new long[] { 1, 1 }, 0, SECOND);
		Call large = books.call(1, false, new long[] { 1, 1 }, new long[] { books.gates[0].capacity * 3, 1 }, 0,
				10 * SECOND);
		books.queues.get(0).addLast(small);
		books.queues.get(0).addLast(large);
		Admission.runHere(books.queues, books, 0);
		assertThat(small.state).isEqualTo(State.ADMITTED);
		assertThat(large.state).isEqualTo(State.WAITING);
		books.gates[0].inUse -= small.weights[0];
		books.gates[1].inUse -= small.weights[1];
		Admission.runHere(books.queues, books, 1);
		assertThat(large.state).isEqualTo(State.ADMITTED);
		assertThat(books.gates[0].inUse).isEqualTo(books.gates[0].capacity);
	}

	@Test
	void aLaterCallNeverTakesTheBoundRoomTheHeadWaitsFor() {
		Ledger books = new Ledger(new SplittableRandom(2), 0);
		Bound gate = books.gates[0];
		gate.inUse = gate.capacity - 1;
		Call head = books.call(0, false, new long[] { 1, 1 }, new long[] { 2, 0 }, 0, 10 * SECOND);
		Call later = books.call(1, false, new long[] { 1, 1 }, new long[] { 1, 0 }, 0, 10 * SECOND);
		books.queues.get(0).addLast(head);
		books.queues.get(0).addLast(later);
		Admission.runHere(books.queues, books, 0);
		assertThat(head.state).isEqualTo(State.WAITING);
		assertThat(later.state).as("fits now, but would keep the head out").isEqualTo(State.WAITING);
		assertThat(later.hold).isEqualTo(Admission.Hold.HEAD);
	}

	@Test
	void aDailyLimitSpentBeyondTheDeadlineFailsTheCallAtOnceEvenWhileABoundHoldsIt() {
		Ledger books = new Ledger(new SplittableRandom(3), 0);
		books.gates[0].inUse = books.gates[0].capacity;
		Call call = books.call(0, false, new long[] { 1, 1 }, new long[] { 1, 0 }, 0, SECOND);
		books.dayWait = 2 * SECOND;
		books.queues.get(0).addLast(call);
		Admission.runHere(books.queues, books, 0);
		assertThat(call.failure).isEqualTo(Admission.Failure.SPENT_FOR_THE_DAY);
		assertThat(books.queues.get(0)).isEmpty();
	}

	@Test
	void aSharedStoreIsAskedOnceEvenWithNoTimeToWaitThenTheCallTimesOut() {
		Ledger books = new Ledger(new SplittableRandom(4), 0);
		Call call = books.call(0, false, new long[] { 1, 1 }, new long[] { 0, 0 }, 0, 0);
		books.queues.get(0).addLast(call);
		assertThat(Admission.nextToBook(books.queues, books, 0)).isSameAs(call);
		assertThat(call.state).isEqualTo(State.BOOKING);
		call.state = State.WAITING;
		assertThat(Admission.nextToBook(books.queues, books, 0)).isNull();
		assertThat(call.failure).isEqualTo(Admission.Failure.TIMED_OUT);
	}

	@Test
	void aSharedRefusalIsLookedAtAgainAtItsExactTimeOrSoonerWhenUnknown() {
		assertThat(Admission.lookAgainAt(100, 50, false, 1_000, 10)).as("a rate: exact").isEqualTo(150);
		assertThat(Admission.lookAgainAt(100, 5_000, false, 1_000, 10)).as("past the deadline: poll").isEqualTo(110);
		assertThat(Admission.lookAgainAt(100, 50, true, 1_000, 10)).as("a slot: poll").isEqualTo(110);
		assertThat(Admission.lookAgainAt(100, 5, true, 1_000, 10)).as("never later than told").isEqualTo(105);
	}

	@Test
	void aCallTheSharedStoreToldToWaitIsNotAskedAgainBeforeItsTimeAndTheNextOneIs() {
		Ledger books = new Ledger(new SplittableRandom(5), 0);
		Call told = books.call(0, false, new long[] { 1, 1 }, new long[] { 0, 0 }, 0, 10 * SECOND);
		told.readyAt = SECOND;
		Call next = books.call(1, false, new long[] { 1, 1 }, new long[] { 0, 0 }, 0, 10 * SECOND);
		books.queues.get(0).addLast(told);
		books.queues.get(0).addLast(next);
		assertThat(Admission.nextToBook(books.queues, books, 0)).isSameAs(next);
		assertThat(Admission.nextToBook(books.queues, books, 0)).isNull();
		assertThat(books.wakeAt).isEqualTo(SECOND);
	}

	enum State {

		WAITING, BOOKING, ADMITTED, FAILED

	}

	static final class Bound implements Gate {

		final long capacity;

		long inUse;

		Bound(long capacity) {
			this.capacity = capacity;
		}

		@Override
		public long inUse() {
			return this.inUse;
		}

		@Override
		public long capacity() {
			return this.capacity;
		}

		@Override
		public long weight(long units) {
			return Math.min(units, this.capacity);
		}

	}

	static final class Call implements Admission.Call {

		final int id;

		final boolean batch;

		final long[] amounts;

		final long[] units;

		final Bound[] gates;

		final long deadline;

		long[] weights = new long[2];

		long readyAt;

		State state = State.WAITING;

		boolean asked;

		Admission.Failure failure;

		Admission.Hold hold;

		long decidedAt = -1;

		long endsAt;

		Call(int id, boolean batch, long[] amounts, long[] units, Bound[] gates, long deadline) {
			this.id = id;
			this.batch = batch;
			this.amounts = amounts;
			this.units = units;
			this.gates = gates;
			this.deadline = deadline;
		}

		boolean sameDemand(Call other) {
			return java.util.Arrays.equals(this.amounts, other.amounts)
					&& java.util.Arrays.equals(this.units, other.units);
		}

		@Override
		public long deadline() {
			return this.deadline;
		}

		@Override
		public long readyAt() {
			return this.readyAt;
		}

		@Override
		public int gates() {
			return this.gates.length;
		}

		@Override
		public Gate gate(int index) {
			return this.gates[index];
		}

		@Override
		public long units(int index) {
			return this.units[index];
		}

	}

	/** Two rate buckets and two in-flight bounds, shared by every call. */
	static final class Ledger implements SharedBooks<Call> {

		final RateBucket[] buckets = new RateBucket[2];

		final Bound[] gates = new Bound[2];

		final List<ArrayDeque<Call>> queues = List.of(new ArrayDeque<>(), new ArrayDeque<>());

		final List<Call> admittedNow = new ArrayList<>();

		long wakeAt = Long.MAX_VALUE;

		long dayWait;

		int admitted;

		int oversizedAdmitted;

		private boolean booked;

		Ledger(SplittableRandom random, long now) {
			for (int i = 0; i < 2; i++) {
				long rate = 10 + random.nextLong(600);
				this.buckets[i] = new RateBucket(rate, 1 + random.nextLong(rate), now);
				this.gates[i] = new Bound(1 + random.nextLong(8));
			}
		}

		Call call(int id, boolean batch, long[] amounts, long[] units, long now, long maxWait) {
			return new Call(id, batch, amounts, units, this.gates, Arith.saturatedAdd(now, maxWait));
		}

		Call newCall(SplittableRandom random, int id, long now) {
			long[] amounts = new long[2];
			long[] units = new long[2];
			for (int i = 0; i < 2; i++) {
				// a few calls larger than a bucket or a bound, and many alike
				boolean oversized = random.nextInt(20) == 0;
				amounts[i] = oversized ? this.buckets[i].capacity() + 1 + random.nextLong(10) : 1 + random.nextLong(3);
				units[i] = oversized ? this.gates[i].capacity + 1 : random.nextLong(2);
			}
			return call(id, random.nextInt(3) == 0, amounts, units, now, random.nextLong(30 * SECOND));
		}

		Call firstWaiting() {
			for (ArrayDeque<Call> queue : this.queues) {
				for (Call call : queue) {
					if (call.state == State.WAITING) {
						return call;
					}
				}
			}
			return null;
		}

		@Override
		public boolean waiting(Call call) {
			return call.state == State.WAITING;
		}

		@Override
		public void look(Call call) {
			call.asked = true;
		}

		@Override
		public boolean exhausted(Call call, long now) {
			return false;
		}

		@Override
		public long penaltyEnd(Call call, long now) {
			return 0;
		}

		@Override
		public long dayWait(Call call, long now) {
			return this.dayWait;
		}

		@Override
		public long wait(Call call, long now) {
			long wait = 0;
			for (int i = 0; i < 2; i++) {
				wait = Math.max(wait, this.buckets[i].nanosUntil(call.amounts[i], now));
			}
			return wait;
		}

		@Override
		public Admission.Refusal book(Call call, long now) {
			long wait = wait(call, now);
			if (wait > 0) {
				return new Admission.Refusal(wait, false);
			}
			for (int i = 0; i < 2; i++) {
				this.buckets[i].take(call.amounts[i], now);
			}
			this.booked = true;
			return null;
		}

		@Override
		public void giveBack(Call call, long now) {
			assertThat(this.booked).isTrue();
			for (int i = 0; i < 2; i++) {
				this.buckets[i].give(call.amounts[i], now);
			}
			this.booked = false;
		}

		@Override
		public void admit(Call call, long now) {
			assertThat(this.booked).as("admitted with the booking just made").isTrue();
			this.booked = false;
			for (int i = 0; i < 2; i++) {
				if (call.units[i] > this.gates[i].capacity) {
					assertThat(this.gates[i].inUse).as("an oversized call is admitted alone").isZero();
					this.oversizedAdmitted++;
				}
				call.weights[i] = this.gates[i].weight(call.units[i]);
				this.gates[i].inUse += call.weights[i];
			}
			call.state = State.ADMITTED;
			call.decidedAt = now;
			this.admitted++;
			this.admittedNow.add(call);
		}

		@Override
		public void fail(Call call, Admission.Failure failure, long now) {
			call.state = State.FAILED;
			call.failure = failure;
			call.decidedAt = now;
		}

		@Override
		public void hold(Call call, Admission.Hold hold, int gate, Call head) {
			call.hold = hold;
		}

		@Override
		public void readyAt(Call call, long at) {
			call.readyAt = at;
		}

		@Override
		public void wakeAt(long at, long now) {
			this.wakeAt = Math.min(this.wakeAt, at);
		}

		@Override
		public boolean asked(Call call) {
			return call.asked;
		}

		@Override
		public boolean sharesBucket(Call call, Call other) {
			for (int i = 0; i < call.amounts.length && i < other.amounts.length; i++) {
				if (call.amounts[i] > 0 && other.amounts[i] > 0) {
					return true;
				}
			}
			return false;
		}

		@Override
		public boolean needsDayCheck(Call call) {
			return false;
		}

		@Override
		public void bookShared(Call call) {
			call.state = State.BOOKING;
		}

		@Override
		public void checkDay(Call call) {
			call.state = State.BOOKING;
		}

	}

}
