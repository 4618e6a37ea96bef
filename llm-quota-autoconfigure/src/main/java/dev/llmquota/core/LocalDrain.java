package dev.llmquota.core;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.List;

import dev.llmquota.core.kernel.Arith;

/**
 * Runs a queue against books of this process, under the queue's lock: each waiter in
 * order is booked to start now or not at all. A later call goes ahead of the head only
 * when it fits now and leaves the head's earliest admission time unchanged.
 */
final class LocalDrain implements Drain {

	private final AdmissionQueue queue;

	private final BucketStore store;

	private final AdmissionRules rules;

	LocalDrain(AdmissionQueue queue, BucketStore store, AdmissionRules rules) {
		this.queue = queue;
		this.store = store;
		this.rules = rules;
	}

	@Override
	public void run(List<Runnable> after) {
		if (this.queue.closed()) {
			return;
		}
		long now = this.queue.clock().nanoTime();
		Instant wallNow = this.queue.clock().instant();
		long nextWake = Long.MAX_VALUE;
		Waiter head = null;
		long headAt = now;
		int tried = 0;
		boolean admitted = false;
		for (ArrayDeque<Waiter> queue : this.queue.classes()) {
			for (Iterator<Waiter> it = queue.iterator(); it.hasNext();) {
				Waiter waiter = it.next();
				// Beyond the backfill window only deadlines are checked, so one release
				// costs little even behind a queue of thousands.
				long retryAt = (tried++ < AdmissionQueue.BACKFILL_WINDOW)
						? attempt(waiter, head, headAt, now, wallNow, after) : Long.MAX_VALUE;
				if (waiter.state() != Waiter.State.WAITING) {
					admitted |= waiter.state() == Waiter.State.ADMITTED;
					it.remove();
					continue;
				}
				if (waiter.deadline <= now) {
					it.remove();
					waiter.fail(AdmissionRules.timeoutException(waiter, now), after);
					continue;
				}
				nextWake = Math.min(nextWake, Math.min(retryAt, waiter.deadline));
				if (head == null) {
					head = waiter;
					headAt = Math.max(now, waiter.readyAt());
				}
			}
		}
		if (admitted && tried > AdmissionQueue.BACKFILL_WINDOW) {
			// Calls beyond the window were not tried; the ones ahead made room, so run
			// again.
			nextWake = now;
		}
		this.queue.wakeAt(nextWake, now);
	}

	/**
	 * Tries to admit one waiter. Returns when a timer should try again ({@code MAX_VALUE}
	 * when a release or the head's admission will); admits or fails the waiter, or sets
	 * when its buckets allow it.
	 */
	private long attempt(Waiter waiter, Waiter head, long headAt, long now, Instant wallNow, List<Runnable> after) {
		if (this.rules.exhausted(waiter, now, wallNow, after)) {
			return Long.MAX_VALUE;
		}
		waiter.refreshCharges();
		if (this.rules.penalized(waiter, now)) {
			return waiter.readyAt();
		}
		Waiter.GateUse blocking = waiter.blockingGate();
		if (blocking != null && spentForTheDay(waiter, now, wallNow, after)) {
			return Long.MAX_VALUE;
		}
		if (blocking != null) {
			waiter.blockedBy(blocking.gate().dimension(), waiter.scopeOf(blocking.gate()), true);
			// A gate opens on a release, which runs the queue: no timer needed. Only the
			// head's bucket time matters (later calls must not delay it).
			if (head == null) {
				waiter.readyAt(Arith.saturatedAdd(now,
						this.store.nanosUntilAvailable(waiter.localBookingRequest(), now, wallNow)));
			}
			return Long.MAX_VALUE;
		}
		if (head != null && AdmissionRules.takesGateRoomOf(head, waiter)) {
			waiter.blockedLike(head);
			return Long.MAX_VALUE;
		}
		Booking booking = this.store.book(waiter.localBookingRequest(), now, wallNow, now);
		if (booking instanceof Booking.Refused refused) {
			waiter.blockedBy(refused.bucket().dimension(), refused.bucket().scope(), false);
			if (AdmissionRules.outlastsDeadline(waiter, refused.bucket(), refused.waitNanos(), now)) {
				waiter.fail(AdmissionRules.budgetException(waiter, refused.bucket(), wallNow, refused.waitNanos()),
						after);
				return Long.MAX_VALUE;
			}
			waiter.readyAt(Arith.saturatedAdd(now, refused.waitNanos()));
			return waiter.readyAt();
		}
		Booking.Booked booked = (Booking.Booked) booking;
		if (booked.start() > now) {
			// Asked to start now, a store must not book later; if one does, wait for that
			// time instead.
			this.store.cancel(booked, now, wallNow);
			waiter.readyAt(booked.start());
			return booked.start();
		}
		if (head != null) {
			long headWait = this.store.nanosUntilAvailable(head.localBookingRequest(), now, wallNow);
			if (Arith.saturatedAdd(now, headWait) > headAt) {
				// Admitting this call would delay the head: give its units back and let
				// it wait.
				this.store.cancel(booked, now, wallNow);
				waiter.blockedLike(head);
				return Long.MAX_VALUE;
			}
		}
		this.queue.admit(waiter, booked, AdmissionQueue.takeGates(waiter), now, after);
		return Long.MAX_VALUE;
	}

	@Override
	public boolean admitsAlone(Waiter waiter, List<Runnable> after) {
		long now = this.queue.clock().nanoTime();
		Instant wallNow = this.queue.clock().instant();
		if (this.rules.sanctioned(waiter, now, wallNow) || waiter.blockingGate() != null) {
			return false;
		}
		Booking booking = this.store.book(waiter.localBookingRequest(), now, wallNow, now);
		if (!(booking instanceof Booking.Booked booked)) {
			return false;
		}
		if (booked.start() > now) {
			this.store.cancel(booked, now, wallNow);
			return false;
		}
		this.queue.admit(waiter, booked, AdmissionQueue.takeGates(waiter), now, after);
		return true;
	}

	/**
	 * Fails a call fast when a daily limit it needs is spent beyond its deadline, even
	 * while an in-flight gate holds it (the store would say so only once the gate opens).
	 */
	private boolean spentForTheDay(Waiter waiter, long now, Instant wallNow, List<Runnable> after) {
		for (Charge charge : waiter.charges) {
			if (!charge.bucket().daily()) {
				continue;
			}
			long wait = this.store.nanosUntilAvailable(List.of(charge), now, wallNow);
			if (wait > 0 && AdmissionRules.outlastsDeadline(waiter, charge.bucket(), wait, now)) {
				waiter.fail(AdmissionRules.budgetException(waiter, charge.bucket(), wallNow, wait), after);
				return true;
			}
		}
		return false;
	}

	@Override
	public void roomCameBack(long now) {
		// every waiter is tried on every run anyway
	}

	@Override
	public List<Waiter> scheduled() {
		return List.of();
	}

	@Override
	public Booking.Booked unschedule(Waiter waiter) {
		throw new IllegalStateException("A local store books no call ahead");
	}

	@Override
	public boolean pending() {
		return false;
	}

}
