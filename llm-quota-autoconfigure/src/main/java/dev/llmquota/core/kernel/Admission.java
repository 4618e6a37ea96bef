package dev.llmquota.core.kernel;

import java.util.Iterator;
import java.util.List;

/**
 * The rules of admission of one account's queue, written once for both stores: priority
 * classes, head protection and backfill, in-flight bounds, oversized calls, deadlines,
 * penalties and spent quotas. Pure: no lock, no clock, no timer; the time comes in as
 * {@code now}, the account's books and calls are read through {@link Books}, and every
 * decision leaves as an effect on it (admit, fail with a reason, hold, book in the shared
 * store, wake at).
 * <p>
 * The invariants, for either store: the first waiting call (the head) is never delayed by
 * a later one; calls of a class are served first come first served, interactive before
 * batch; a call larger than a bound is admitted alone, charged in full; no call waits
 * past its deadline; a refusal's wait is looked at again when capacity comes back.
 */
public final class Admission {

	/** How many waiting calls one run tries; beyond it only deadlines are checked. */
	public static final int BACKFILL_WINDOW = 256;

	private Admission() {
	}

	/** Why the rules fail a call. */
	public enum Failure {

		/** Its deadline passed while it waited. */
		TIMED_OUT,

		/** A daily limit or budget it needs is spent beyond its deadline. */
		SPENT_FOR_THE_DAY,

		/** The provider said the quota is spent, and no probe is due. */
		EXHAUSTED

	}

	/** What holds a call that waits on. */
	public enum Hold {

		/** A provider penalty. */
		PENALTY,

		/** An in-flight bound it does not fit now; a release runs the queue again. */
		GATE,

		/** The head of the queue needs the room it would take. */
		HEAD

	}

	/** A call waiting for admission, as the rules see it. */
	public interface Call {

		long deadline();

		/**
		 * When its buckets or a penalty allow it, as last computed.
		 * @return the monotonic time
		 */
		long readyAt();

		/**
		 * How many in-flight bounds the call enters.
		 * @return the count
		 */
		int gates();

		Gate gate(int index);

		long units(int index);

	}

	/**
	 * A store's refusal: the call's buckets allow it in {@code waitNanos}.
	 *
	 * @param waitNanos how long until they allow it
	 * @param daily whether a daily limit refused it (not booked ahead into another day)
	 */
	public record Refusal(long waitNanos, boolean daily) {

	}

	/**
	 * Runs a queue whose calls are booked in this process's books: each call in order is
	 * booked to start now or not at all. A later call goes ahead of the head only when it
	 * fits now and leaves the head's earliest admission time unchanged; and of the first
	 * waiting call of its own class too, so a later class's first call keeps its turn
	 * within its class while an earlier class waits.
	 * @param classes the queues in the order they are served
	 * @param books the books and calls
	 * @param now the monotonic time
	 */
	public static <C extends Call> void runHere(List<? extends Iterable<C>> classes, Books<C> books, long now) {
		long nextWake = Long.MAX_VALUE;
		C head = null;
		long headAt = now;
		int tried = 0;
		boolean admitted = false;
		for (Iterable<C> queue : classes) {
			C classHead = null;
			long classHeadAt = now;
			for (Iterator<C> it = queue.iterator(); it.hasNext();) {
				C call = it.next();
				long retryAt = (tried++ < BACKFILL_WINDOW) ? attemptHere(call, head, headAt,
						(classHead != head) ? classHead : null, classHeadAt, books, now) : Long.MAX_VALUE;
				if (retryAt == ADMITTED || retryAt == FAILED) {
					admitted |= retryAt == ADMITTED;
					it.remove();
					continue;
				}
				if (call.deadline() <= now) {
					it.remove();
					books.fail(call, Failure.TIMED_OUT, now);
					continue;
				}
				nextWake = Math.min(nextWake, Math.min(retryAt, call.deadline()));
				if (head == null) {
					head = call;
					headAt = Math.max(now, call.readyAt());
				}
				if (classHead == null) {
					// its buckets' wait as they stand: its readyAt is current only if it
					// is the head or its buckets refused it
					classHead = call;
					classHeadAt = Arith.saturatedAdd(now, books.wait(call, now));
				}
			}
		}
		if (admitted && tried > BACKFILL_WINDOW) {
			// calls beyond the window were not tried; the ones ahead made room
			nextWake = now;
		}
		books.wakeAt(nextWake, now);
	}

	/** What {@link #attemptHere} returns for a call it admitted. */
	private static final long ADMITTED = Long.MIN_VALUE;

	/** What {@link #attemptHere} returns for a call it failed. */
	private static final long FAILED = Long.MIN_VALUE + 1;

	/**
	 * Tries to admit one call here. Returns when to try again ({@code MAX_VALUE} when a
	 * release or the head's admission will), {@link #ADMITTED} or {@link #FAILED}.
	 * @param classHead the first waiting call of the call's class when it is not the
	 * head, or {@code null}
	 */
	private static <C extends Call> long attemptHere(C call, C head, long headAt, C classHead, long classHeadAt,
			Books<C> books, long now) {
		books.look(call);
		Screen screen = screen(call, head, books, now, false);
		if (screen == Screen.CLEAR && classHead != null && takesGateRoomOf(classHead, call)) {
			books.hold(call, Hold.HEAD, -1, classHead);
			screen = Screen.BEHIND_HEAD;
		}
		switch (screen) {
			case FAILED:
				return FAILED;
			case PENALIZED:
				return call.readyAt();
			case GATED:
				// Only the head's bucket time matters: later calls must not delay it.
				if (head == null) {
					books.readyAt(call, Arith.saturatedAdd(now, books.wait(call, now)));
				}
				return Long.MAX_VALUE;
			case BEHIND_HEAD:
				return Long.MAX_VALUE;
			default:
				break;
		}
		Refusal refusal = books.book(call, now);
		if (refusal != null) {
			if (outlastsDeadline(refusal.daily(), refusal.waitNanos(), call.deadline(), now)) {
				books.fail(call, Failure.SPENT_FOR_THE_DAY, now);
				return FAILED;
			}
			long at = Arith.saturatedAdd(now, refusal.waitNanos());
			books.readyAt(call, at);
			return at;
		}
		C delayed = delays(head, headAt, books, now) ? head
				: delays(classHead, classHeadAt, books, now) ? classHead : null;
		if (delayed != null) {
			// admitting this call would delay a first waiting call: give its units back
			books.giveBack(call, now);
			books.hold(call, Hold.HEAD, -1, delayed);
			return Long.MAX_VALUE;
		}
		books.admit(call, now);
		return ADMITTED;
	}

	/** Whether a waiting call's earliest admission is now later than {@code at}. */
	private static <C extends Call> boolean delays(C waiting, long at, Books<C> books, long now) {
		return waiting != null && Arith.saturatedAdd(now, books.wait(waiting, now)) > at;
	}

	/**
	 * Admits a call at once when nothing holds it and its books have room now; nobody
	 * waits. Takes nothing otherwise.
	 * @return whether it was admitted
	 */
	public static <C extends Call> boolean admitAlone(C call, Books<C> books, long now) {
		if (books.penaltyEnd(call, now) > now || blockingGate(call) >= 0 || books.exhausted(call, now)) {
			return false;
		}
		if (books.book(call, now) != null) {
			return false;
		}
		books.admit(call, now);
		return true;
	}

	/** What {@link #earliest} returns for a call a spent quota would fail. */
	public static final long NEVER = Long.MAX_VALUE;

	/** What makes a call wait, as {@link #earliest} found it. */
	public enum Cause {

		/** Nothing: it would be admitted now. */
		NOTHING,

		/** A spent quota would fail it. */
		EXHAUSTED,

		/** A provider penalty. */
		PENALTY,

		/** A daily limit or budget. */
		DAY,

		/** Its rate buckets, with the calls waiting before it. */
		BUCKETS,

		/** A full in-flight bound. */
		GATE

	}

	/**
	 * When a call would be admitted were it asked now, as the books stand, taking
	 * nothing: the latest of its penalty's end, its daily limits, its buckets and, when
	 * an in-flight bound it needs is full, a release; {@link #NEVER} when a spent quota
	 * would fail it. A route compares this across its targets.
	 * @param call the call, not queued
	 * @param books the books
	 * @param now the monotonic time
	 * @param bucketWait how long its buckets make it wait behind the calls already
	 * waiting, as the drain sees them
	 * @param gateWait how long until a full in-flight bound frees room, as estimated
	 * @return the time and what sets it
	 */
	public static <C extends Call> Estimate earliest(C call, Books<C> books, long now, long bucketWait, long gateWait) {
		if (books.exhausted(call, now)) {
			return new Estimate(NEVER, Cause.EXHAUSTED);
		}
		Estimate estimate = new Estimate(now, Cause.NOTHING);
		estimate = estimate.later(books.penaltyEnd(call, now), Cause.PENALTY);
		estimate = estimate.later(Arith.saturatedAdd(now, books.dayWait(call, now)), Cause.DAY);
		estimate = estimate.later(Arith.saturatedAdd(now, bucketWait), Cause.BUCKETS);
		if (blockingGate(call) >= 0) {
			estimate = estimate.later(Arith.saturatedAdd(now, Math.max(1, gateWait)), Cause.GATE);
		}
		return estimate;
	}

	/**
	 * When a call would be admitted, and what sets that time.
	 *
	 * @param at the monotonic time, or {@link #NEVER}
	 * @param cause what makes it wait
	 */
	public record Estimate(long at, Cause cause) {

		Estimate later(long other, Cause otherCause) {
			return (other > this.at) ? new Estimate(other, otherCause) : this;
		}

	}

	/**
	 * Returns the first call of a queue booked in a shared store that may be booked now,
	 * having handed it to {@link SharedBooks#bookShared} or {@link SharedBooks#checkDay};
	 * fails calls past their deadline, and sets the wake-up when none may go yet. A call
	 * is asked about once, even with no time to wait at all.
	 * @param classes the queues in the order they are served
	 * @param books the books and calls
	 * @param now the monotonic time
	 * @return the call, or {@code null}
	 */
	public static <C extends Call> C nextToBook(List<? extends Iterable<C>> classes, SharedBooks<C> books, long now) {
		long nextWake = Long.MAX_VALUE;
		int tried = 0;
		C head = null;
		for (int served = 0; served < classes.size(); served++) {
			Iterable<C> queue = classes.get(served);
			// a later class (batch) is booked only to start now, never ahead: the first
			// of its calls its buckets refused keeps its turn, the later ones of its
			// class that take from one of its buckets waiting behind it, since the
			// shared books cannot tell here whether they would delay it
			boolean bookedOnlyNow = served > 0;
			C refusedFirst = null;
			for (Iterator<C> it = queue.iterator(); it.hasNext();) {
				C call = it.next();
				if (!books.waiting(call)) {
					continue;
				}
				// a call past its deadline fails once it was asked, or when it is
				// beyond the window and never will be
				if (call.deadline() <= now && (books.asked(call) || tried >= BACKFILL_WINDOW)) {
					it.remove();
					books.fail(call, Failure.TIMED_OUT, now);
					continue;
				}
				nextWake = Math.min(nextWake, Math.max(call.deadline(), now));
				if (tried++ >= BACKFILL_WINDOW) {
					continue;
				}
				books.look(call);
				Screen screen = screen(call, head, books, now, true);
				if (screen == Screen.FAILED) {
					it.remove();
					continue;
				}
				if (screen == Screen.CLEAR && refusedFirst != null && books.sharesBucket(call, refusedFirst)) {
					books.hold(call, Hold.HEAD, -1, refusedFirst);
					screen = Screen.BEHIND_HEAD;
				}
				if (screen == Screen.PENALIZED || screen == Screen.GATED) {
					head = (head != null) ? head : call;
				}
				if (screen == Screen.PENALIZED) {
					nextWake = Math.min(nextWake, call.readyAt());
					if (bookedOnlyNow && refusedFirst == null && books.penaltyEnd(call, now) <= now) {
						refusedFirst = call;
					}
				}
				else if (screen == Screen.GATED && books.needsDayCheck(call)) {
					// a spent day fails the call now, not once the bound opens
					books.checkDay(call);
					return call;
				}
				else if (screen == Screen.CLEAR) {
					books.bookShared(call);
					return call;
				}
			}
		}
		books.wakeAt(nextWake, now);
		return null;
	}

	private enum Screen {

		/** Failed. */
		FAILED,

		/** Waits until its {@code readyAt}: a penalty, or the buckets as last told. */
		PENALIZED,

		/** An in-flight bound holds it. */
		GATED,

		/** It would take gate room the head needs. */
		BEHIND_HEAD,

		/** Its buckets may be asked. */
		CLEAR

	}

	/**
	 * The checks before a call's buckets are asked, alike for both stores: a spent quota,
	 * a penalty, an in-flight bound (with a daily limit spent beyond the deadline failing
	 * the call at once), and the head's gate room.
	 * @param untilReady whether a call waits until its {@code readyAt} (a shared store
	 * told it when; asking again sooner costs a round trip) rather than being tried
	 */
	private static <C extends Call> Screen screen(C call, C head, Books<C> books, long now, boolean untilReady) {
		if (books.exhausted(call, now)) {
			books.fail(call, Failure.EXHAUSTED, now);
			return Screen.FAILED;
		}
		long penaltyEnd = books.penaltyEnd(call, now);
		if (penaltyEnd > now) {
			books.hold(call, Hold.PENALTY, -1, null);
			books.readyAt(call, penaltyEnd);
			return Screen.PENALIZED;
		}
		if (untilReady && call.readyAt() > now) {
			// a refund or a release here brings it forward
			return Screen.PENALIZED;
		}
		int blocking = blockingGate(call);
		if (blocking >= 0) {
			long dayWait = books.dayWait(call, now);
			if (dayWait > 0 && outlastsDeadline(true, dayWait, call.deadline(), now)) {
				books.fail(call, Failure.SPENT_FOR_THE_DAY, now);
				return Screen.FAILED;
			}
			books.hold(call, Hold.GATE, blocking, null);
			return Screen.GATED;
		}
		if (head != null && takesGateRoomOf(head, call)) {
			books.hold(call, Hold.HEAD, -1, head);
			return Screen.BEHIND_HEAD;
		}
		return Screen.CLEAR;
	}

	/**
	 * Returns the first bound the call does not fit now, or -1.
	 * @param call the call
	 * @return the bound's index
	 */
	public static int blockingGate(Call call) {
		for (int i = 0; i < call.gates(); i++) {
			if (!call.gate(i).fits(call.units(i))) {
				return i;
			}
		}
		return -1;
	}

	/**
	 * Whether the call would take room in a bound that the head needs: the bound holding
	 * the head, or one that would not fit them both.
	 * @param head the first waiting call
	 * @param call a later call
	 * @return whether it would
	 */
	public static boolean takesGateRoomOf(Call head, Call call) {
		int headBlocking = blockingGate(head);
		Gate blockingHead = (headBlocking >= 0) ? head.gate(headBlocking) : null;
		for (int i = 0; i < call.gates(); i++) {
			Gate gate = call.gate(i);
			long headUnits = unitsOf(head, gate);
			if (headUnits < 0) {
				continue;
			}
			if (gate == blockingHead
					|| gate.inUse() + gate.weight(call.units(i)) + gate.weight(headUnits) > gate.capacity()) {
				return true;
			}
		}
		return false;
	}

	private static long unitsOf(Call call, Gate gate) {
		for (int i = 0; i < call.gates(); i++) {
			if (call.gate(i) == gate) {
				return call.units(i);
			}
		}
		return -1;
	}

	/**
	 * Whether a daily limit refusing a call for {@code waitNanos} outlasts its deadline:
	 * then the call fails now rather than at its deadline.
	 * @param daily whether the refusing limit is daily
	 * @param waitNanos the wait it gave
	 * @param deadline the call's deadline
	 * @param now the monotonic time
	 * @return whether the call fails now
	 */
	public static boolean outlastsDeadline(boolean daily, long waitNanos, long deadline, long now) {
		return daily && waitNanos > deadline - now;
	}

	/**
	 * When a call a shared store refused looks again: at the time the store gave when
	 * that is exact (a rate, not a slot) and within its deadline; otherwise sooner, since
	 * other processes' refunds and releases are unseen here. A refund or release here
	 * brings it forward to at once.
	 * @param now the monotonic time
	 * @param waitNanos the store's wait
	 * @param slots whether a slot, not a rate, refused it
	 * @param deadline the call's deadline
	 * @param pollNanos how soon to look again when the time is not exact
	 * @return the time
	 */
	public static long lookAgainAt(long now, long waitNanos, boolean slots, long deadline, long pollNanos) {
		long availableAt = Arith.saturatedAdd(now, waitNanos);
		boolean exact = !slots && availableAt <= deadline;
		return exact ? availableAt : now + Math.min(waitNanos, pollNanos);
	}

}
