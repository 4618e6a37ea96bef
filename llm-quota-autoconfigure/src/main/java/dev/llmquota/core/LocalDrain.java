package dev.llmquota.core;

import java.util.List;

import dev.llmquota.core.kernel.Admission;

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
		if (this.queue.closed()) {
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
		BookingRequest request = probe.localBookingRequest(ahead);
		long bucketWait = this.store.nanosUntilAvailable(request, now, wallNow);
		return headroom(probe, now, wallNow, bucketWait, () -> {
			Charge binding = request.charges().get(0);
			long longest = -1;
			for (Charge charge : request.charges()) {
				long wait = this.store.nanosUntilAvailable(List.of(charge), now, wallNow);
				if (wait > longest) {
					longest = wait;
					binding = charge;
				}
			}
			return binding.bucket().scope().id() + " " + binding.bucket().dimension().id();
		});
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
