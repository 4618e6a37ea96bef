package dev.llmquota.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Instant;
import java.util.List;

/**
 * An admitted call's hold on its buckets and gates. The reservation is corrected once
 * from the usage the provider reports, and the slots are released exactly once, whatever
 * ends the call: completion, error, cancellation, or the lease timeout.
 */
public final class QuotaPermit {

	// two flags set once each, in the permit itself rather than two objects beside it
	private static final VarHandle RECONCILED;

	private static final VarHandle RELEASED;

	static {
		try {
			MethodHandles.Lookup lookup = MethodHandles.lookup();
			RECONCILED = lookup.findVarHandle(QuotaPermit.class, "reconciled", boolean.class);
			RELEASED = lookup.findVarHandle(QuotaPermit.class, "released", boolean.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private final AdmissionQueue queue;

	private final Pool pool;

	private final Demand demand;

	private final Booking.Booked booking;

	private final List<Waiter.GateUse> gateUses;

	private final long[] weights;

	private final long admittedAt;

	private final long waitedNanos;

	/** Set once, through {@code RECONCILED}. */
	private volatile boolean reconciled;

	/** Set once, through {@code RELEASED}. */
	private volatile boolean released;

	/** In shadow mode: the twin that waits as the call would have; else {@code null}. */
	private final ShadowCall shadow;

	// the account's calls in flight (LivePermits), under its admission lock

	boolean live;

	QuotaPermit liveNext;

	QuotaPermit livePrevious;

	QuotaPermit(AdmissionQueue queue, Waiter waiter, Booking.Booked booking, long[] weights, long admittedAt) {
		this.queue = queue;
		this.pool = waiter.pool;
		this.demand = waiter.demand;
		this.booking = booking;
		this.gateUses = waiter.gateUses;
		this.weights = weights;
		this.admittedAt = admittedAt;
		this.waitedNanos = admittedAt - waiter.enqueuedAt;
		this.shadow = null;
	}

	/**
	 * A permit given at once to a call of a pool in shadow mode or off: it holds nothing;
	 * in shadow mode it tells the call's twin how the call ended.
	 */
	private QuotaPermit(Pool pool, Demand demand, ShadowCall shadow, long now, Instant wallNow) {
		this.queue = null;
		this.pool = pool;
		this.demand = demand;
		this.booking = new Booking.Booked(now, wallNow, List.of());
		this.gateUses = List.of();
		this.weights = new long[0];
		this.admittedAt = now;
		this.waitedNanos = 0;
		this.shadow = shadow;
	}

	static QuotaPermit shadow(Pool pool, Demand demand, ShadowCall shadow, QuotaClock clock) {
		return new QuotaPermit(pool, demand, shadow, shadow.start(), clock.instant());
	}

	static QuotaPermit off(Pool pool, Demand demand, QuotaClock clock) {
		return new QuotaPermit(pool, demand, null, clock.nanoTime(), clock.instant());
	}

	/**
	 * Returns the pool the call was admitted to.
	 * @return the pool
	 */
	public Pool pool() {
		return this.pool;
	}

	/**
	 * Returns what the call reserved.
	 * @return the demand
	 */
	public Demand demand() {
		return this.demand;
	}

	/**
	 * Returns the charges taken at admission.
	 * @return the charges
	 */
	public List<Charge> charges() {
		return this.booking.charges();
	}

	/**
	 * Returns the booking the call was admitted on: its charges, and its lease on shared
	 * slots.
	 * @return the booking
	 */
	Booking.Booked booking() {
		return this.booking;
	}

	/**
	 * Returns how long the call waited for admission.
	 * @return the wait in nanoseconds
	 */
	public long waitedNanos() {
		return this.waitedNanos;
	}

	/**
	 * Returns whether the permit's slots were released.
	 * @return whether released
	 */
	public boolean isReleased() {
		return this.released;
	}

	/**
	 * Corrects the reservation from the usage the provider reported: unused output is
	 * refunded, input corrected in either direction (an under-estimate is charged even
	 * into debt). Only the first call has an effect.
	 * @param usage what the call used
	 */
	public void reconcile(Usage usage) {
		reconcile(usage, false);
	}

	/**
	 * Corrects the books from usage llm-quota estimated from what went by (a stream that
	 * ended without its usage): the token rates follow it, but a money budget keeps what
	 * the call reserved, since output the text did not show (a reasoning model's) is
	 * billed too. Only the first correction has an effect.
	 * @param usage the estimated usage
	 */
	public void reconcileEstimated(Usage usage) {
		reconcile(usage, true);
	}

	private void reconcile(Usage usage, boolean estimated) {
		if (RECONCILED.compareAndSet(this, false, true)) {
			if (this.queue != null) {
				this.queue.corrections().reconcile(this, usage, estimated);
			}
			else if (this.shadow != null) {
				this.shadow.reconcile(usage, estimated);
			}
		}
	}

	/**
	 * Gives back what a call the provider refused reserved: its tokens, and its request
	 * too where the provider does not count refused requests. A refusal is not usage: the
	 * output statistics do not see it. Only the first correction has an effect.
	 * @param keepRequests whether the request stays charged ({@code charge-refused:
	 * requests})
	 */
	public void refuse(boolean keepRequests) {
		if (RECONCILED.compareAndSet(this, false, true)) {
			if (this.queue != null) {
				this.queue.corrections().refuse(this, keepRequests);
			}
			else if (this.shadow != null) {
				this.shadow.refuse(keepRequests);
			}
		}
	}

	/**
	 * Ends a call that completed: corrects the books from its usage if known, records its
	 * latency, and releases its slots.
	 * @param usage what the call used, or {@code null} when the provider reported nothing
	 * (the reservation then stands, and output charged only as reported is charged its
	 * ceiling: never under-charged)
	 */
	public void complete(Usage usage) {
		if (this.queue == null) {
			if (RELEASED.compareAndSet(this, false, true) && this.shadow != null) {
				this.shadow.complete(usage);
			}
			return;
		}
		if (usage != null) {
			reconcile(usage);
		}
		release(true);
	}

	/**
	 * Ends a call that failed or was cancelled: releases its slots and keeps its
	 * reservation charged; where output is charged only as reported and none was, its
	 * output ceiling is charged. Only the first release has an effect.
	 */
	public void release() {
		release(false);
	}

	/**
	 * Ends a call that never started (admitted as its caller gave up waiting): gives back
	 * everything it booked and releases its slots. A permit already released is left as
	 * it is.
	 */
	public void cancel() {
		if (this.queue == null) {
			// shadow mode: its twin gives back what it booked, as enforce mode would
			if (RELEASED.compareAndSet(this, false, true) && this.shadow != null) {
				this.shadow.cancel();
			}
			return;
		}
		// the first correction wins: a booking given back is not charged as unreported,
		// and one already corrected or released is not given back
		if (RECONCILED.compareAndSet(this, false, true)) {
			this.queue.giveBack(this);
		}
		release();
	}

	void expire() {
		release(false);
	}

	private void release(boolean completed) {
		if (this.queue == null) {
			if (RELEASED.compareAndSet(this, false, true) && this.shadow != null) {
				this.shadow.release();
			}
			return;
		}
		if (RELEASED.compareAndSet(this, false, true)) {
			if (RECONCILED.compareAndSet(this, false, true)) {
				// never reconciled nor refused: nothing was reported
				this.queue.corrections().unreported(this);
			}
			this.queue.release(this, completed);
		}
	}

	List<Waiter.GateUse> gateUses() {
		return this.gateUses;
	}

	long[] weights() {
		return this.weights;
	}

	/**
	 * Returns when the call was admitted.
	 * @return the monotonic time of admission, in nanoseconds
	 */
	public long admittedAt() {
		return this.admittedAt;
	}

	/**
	 * Returns whether a refund may go to this bucket: not to a daily counter whose day
	 * has ended since the call was booked, which is the day it was charged to (a call
	 * booked ahead may start the next day).
	 */
	boolean refundable(BucketSpec bucket, Instant wallNow) {
		return this.booking.refundable(bucket, wallNow);
	}

}
