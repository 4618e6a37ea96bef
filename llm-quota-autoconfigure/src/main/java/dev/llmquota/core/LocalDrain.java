package dev.llmquota.core;

import java.util.List;

import dev.llmquota.core.kernel.Admission;
import dev.llmquota.core.kernel.Arith;

/**
 * Runs a queue against books of this process, under the queue's lock: the
 * {@link Admission#runHere rules} book each call to start now or not at all, here.
 */
final class LocalDrain extends QueueBooks implements Drain {

	private final BucketStore store;

	/** The booking just made, until the rules admit its call or give it back. */
	private Booking.Booked booked;

	LocalDrain(AdmissionQueue queue, Account account, QuotaSettings settings, BucketStore store) {
		super(queue, account, settings, store);
		this.store = store;
	}

	@Override
	public void run(List<Runnable> after) {
		if (this.queue.closed() || !this.queue.anyoneQueued()) {
			return;
		}
		long now = this.queue.clock().nanoTime();
		runs(now, this.queue.clock().instant(), after);
		Admission.runHere(this.queue.classes(), this, now);
	}

	@Override
	public boolean admitsAlone(Waiter waiter, List<Runnable> after) {
		long now = this.queue.clock().nanoTime();
		runs(now, this.queue.clock().instant(), after);
		return Admission.admitAlone(waiter, this, now);
	}

	@Override
	public long dayWait(Waiter waiter, long now) {
		long wait = 0;
		for (Charge charge : waiter.charges) {
			if (charge.bucket().daily()) {
				wait = Math.max(wait, dayWait(charge, now, this.wallNow));
			}
		}
		return wait;
	}

	@Override
	public long wait(Waiter waiter, long now) {
		return this.store.nanosUntilAvailable(waiter.localBookingRequest(), now, this.wallNow);
	}

	@Override
	public Admission.Refusal book(Waiter waiter, long now) {
		Booking booking = this.store.book(waiter.localBookingRequest(), now, this.wallNow, now);
		if (booking instanceof Booking.Refused refused) {
			waiter.blockedBy(refused.bucket().dimension(), refused.bucket().scope(), false);
			return new Admission.Refusal(refused.waitNanos(), refused.bucket().daily());
		}
		Booking.Booked booked = (Booking.Booked) booking;
		if (booked.start() > now) {
			// Asked to start now, a store must not book later; if one does, wait for that
			// time instead.
			this.store.cancel(booked, now, this.wallNow);
			return new Admission.Refusal(booked.start() - now, false);
		}
		this.booked = booked;
		return null;
	}

	@Override
	public void giveBack(Waiter waiter, long now) {
		this.store.cancel(this.booked, now, this.wallNow);
		this.booked = null;
	}

	@Override
	public void admit(Waiter waiter, long now) {
		Booking.Booked booked = this.booked;
		this.booked = null;
		this.queue.admit(waiter, booked, Gates.take(waiter.gateUses), now, this.after);
	}

	@Override
	public Headroom headroom(Waiter probe, List<Waiter> ahead, long now, java.time.Instant wallNow) {
		List<Charge> behind = ahead.isEmpty() ? probe.charges : probe.chargesBehind(ahead);
		long bucketWait = 0;
		Charge binding = behind.isEmpty() ? null : behind.get(0);
		for (int i = 0; i < behind.size(); i++) {
			long wait = waitBehind(probe, behind.get(i), probe.charges.get(i).units(), now, wallNow);
			if (wait > bucketWait) {
				bucketWait = wait;
				binding = behind.get(i);
			}
		}
		Charge named = binding;
		return headroom(probe, now, wallNow, bucketWait,
				() -> (named != null) ? named.bucket().scope().id() + " " + named.bucket().dimension().id() : null);
	}

	/**
	 * How long a bucket makes a call wait behind the calls ahead, its units and theirs
	 * summed in {@code charge} (a batch call leaving the interactive reserve): beyond the
	 * bucket's capacity, the rest comes at its rate once it is full (a call larger than
	 * the capacity alone goes when it is full).
	 */
	private long waitBehind(Waiter probe, Charge charge, long own, long now, java.time.Instant wallNow) {
		BucketSpec bucket = charge.bucket();
		if (bucket.daily() || charge.units() <= bucket.capacity()) {
			return this.store.nanosUntilAvailable(probe.localBookingRequest(List.of(charge)), now, wallNow);
		}
		long full = this.store.nanosUntilAvailable(List.of(new Charge(bucket, bucket.capacity())), now, wallNow);
		long beyond = charge.units() - Math.max(bucket.capacity(), own);
		return Arith.saturatedAdd(full,
				(beyond > 0) ? Arith.mulDivCeil(beyond, 60_000_000_000L, Math.max(1, bucket.enforced())) : 0);
	}

	@Override
	public void roomCameBack() {
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
