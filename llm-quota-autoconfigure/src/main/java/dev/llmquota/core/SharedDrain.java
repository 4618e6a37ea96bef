package dev.llmquota.core;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.llmquota.QuotaStoreUnavailableException;
import dev.llmquota.core.kernel.Admission;
import dev.llmquota.core.kernel.Arith;

/**
 * Runs a queue against a store shared by many processes: each waiter, in queue order, is
 * booked once at the earliest time every bucket allows (one round trip), then waits out
 * its start holding its local gates. Bookings go out from the engine's store thread only,
 * never under the lock, so no caller's thread waits on the network.
 */
final class SharedDrain extends QueueBooks implements Drain {

	/** How often this replica reads the shared books of the pools a route asks about. */
	static final long VIEW_READ_NANOS = 1_000_000_000L;

	/** How long a pool no route asked about stays read. */
	static final long VIEW_KEPT_NANOS = 60_000_000_000L;

	private final QuotaStore store;

	private final Executor storeThread;

	private final AtomicBoolean requested = new AtomicBoolean();

	/** Calls booked ahead in the shared store, waiting for their start. */
	private final Set<Waiter> scheduled = Collections.newSetFromMap(new IdentityHashMap<>());

	/** The pools a route asked about lately, with the last call it asked for. */
	private final Map<Pool, Waiter> viewed = new ConcurrentHashMap<>();

	private final AtomicBoolean reading = new AtomicBoolean();

	SharedDrain(AdmissionQueue queue, Account account, QuotaSettings settings, QuotaStore store, Executor storeThread) {
		super(queue, account, settings, store);
		this.store = store;
		this.storeThread = storeThread;
	}

	@Override
	public void run(List<Runnable> after) {
		if (!this.queue.closed() && this.requested.compareAndSet(false, true)) {
			try {
				this.storeThread.execute(this::drain);
			}
			catch (RejectedExecutionException ex) {
				// the engine is closing: every waiter fails with it
			}
		}
	}

	/** A shared store is asked from the store thread only, never a caller's. */
	@Override
	public boolean admitsAlone(Waiter waiter, List<Runnable> after) {
		return false;
	}

	@Override
	public boolean pending() {
		return this.requested.get();
	}

	/**
	 * From this replica's view of the shared books: what the store last answered for the
	 * pool (a booking ahead, a refusal's wait), what it told the calls of the pool
	 * waiting here (their {@code readyAt}) and when the calls it booked ahead start. The
	 * pool's books are read from then on, every {@link #VIEW_READ_NANOS}, while routes
	 * ask about it, so the calls of other replicas show too; a pool not yet read looks
	 * free.
	 */
	@Override
	public Headroom headroom(Waiter probe, List<Waiter> ahead, long now, Instant wallNow) {
		if (this.viewed.put(probe.pool, probe) == null) {
			readViewsSoon(0);
		}
		long busy = probe.pool.sharedBusyUntil();
		long bucketWait = (busy > now) ? Arith.saturatedAdd(busy, -now) : 0;
		Waiter last = null;
		for (Waiter waiter : ahead) {
			if (waiter.readyAt() - now > bucketWait) {
				bucketWait = waiter.readyAt() - now;
				last = waiter;
			}
		}
		for (Waiter waiter : this.scheduled) {
			if (waiter.pool == probe.pool && waiter.booking().start() - now > bucketWait) {
				bucketWait = waiter.booking().start() - now;
				last = waiter;
			}
		}
		Waiter binding = last;
		return headroom(probe, now, wallNow, bucketWait, () -> (binding != null) ? binding.blocker() : "shared books");
	}

	/**
	 * Room came back here (a refund, a release): calls the shared store refused are asked
	 * again at once rather than at the time it gave, which assumed nothing would come
	 * back.
	 */
	@Override
	public void roomCameBack() {
		if (!this.queue.anyoneQueued()) {
			return;
		}
		long now = this.queue.clock().nanoTime();
		for (ArrayDeque<Waiter> queue : this.queue.classes()) {
			for (Waiter waiter : queue) {
				waiter.roomCameBack(now);
			}
		}
	}

	@Override
	public List<Waiter> scheduled() {
		return new ArrayList<>(this.scheduled);
	}

	@Override
	public Booking.Booked unschedule(Waiter waiter) {
		this.scheduled.remove(waiter);
		Booking.Booked booked = waiter.unscheduled();
		Gates.release(waiter.gateUses, waiter.weights());
		return booked;
	}

	/** Reads the viewed pools' books on the store thread, after a delay. */
	private void readViewsSoon(long delayNanos) {
		if (this.queue.closed() || !this.reading.compareAndSet(false, true)) {
			return;
		}
		Runnable read = () -> {
			try {
				this.storeThread.execute(this::readViews);
			}
			catch (RejectedExecutionException ex) {
				// the engine is closing
			}
		};
		if (delayNanos == 0) {
			read.run();
		}
		else {
			this.queue.clock().schedule(delayNanos, read);
		}
	}

	/**
	 * Asks the shared store how soon each viewed pool would admit the last call a route
	 * asked about, one round trip a pool, and keeps the answer as this replica's view;
	 * forgets pools no route asked about for {@link #VIEW_KEPT_NANOS}. Runs on the store
	 * thread only, as bookings do, so a read and a booking's answer never cross.
	 */
	private void readViews() {
		this.reading.set(false);
		if (this.queue.closed()) {
			return;
		}
		long now = this.queue.clock().nanoTime();
		Instant wallNow = this.queue.clock().instant();
		for (Map.Entry<Pool, Waiter> entry : this.viewed.entrySet()) {
			Waiter probe = entry.getValue();
			if (now - probe.enqueuedAt > VIEW_KEPT_NANOS) {
				this.viewed.remove(entry.getKey(), probe);
				continue;
			}
			try {
				long wait = this.store.nanosUntilAvailable(probe.localBookingRequest(), now, wallNow);
				entry.getKey().sharedBusyUntil(Arith.saturatedAdd(now, wait));
			}
			catch (RuntimeException ex) {
				// the store did not answer: the view stays as the last answer left it
			}
		}
		if (!this.viewed.isEmpty()) {
			readViewsSoon(VIEW_READ_NANOS);
		}
	}

	/**
	 * Books waiters in queue order, one round trip each, until none can be booked now;
	 * runs on the store thread only.
	 */
	private void drain() {
		this.requested.set(false);
		while (true) {
			List<Runnable> after = new ArrayList<>();
			Waiter next;
			long now;
			Instant wallNow;
			this.queue.lock().lock();
			try {
				if (this.queue.closed()) {
					return;
				}
				now = this.queue.clock().nanoTime();
				wallNow = this.queue.clock().instant();
				next = nextToBook(now, wallNow, after);
			}
			finally {
				this.queue.lock().unlock();
			}
			Signals.emit(after);
			if (next == null) {
				return;
			}
			if (next.checkingDay()) {
				checkDay(next, now, wallNow);
				continue;
			}
			Booking booking;
			try {
				// A batch call is booked only to start now: booked ahead, it would keep
				// its place against interactive calls that come after it.
				long latest = (next.priority == Priority.BATCH) ? now : next.deadline;
				booking = this.store.book(next.bookingRequest(), now, wallNow, latest, next.deadline);
			}
			catch (RuntimeException ex) {
				booking = new Booking.Unavailable(String.valueOf(ex.getMessage()));
			}
			Booking.Booked giveBack = null;
			this.queue.lock().lock();
			try {
				giveBack = settle(next, booking, now, wallNow, after);
			}
			catch (RuntimeException ex) {
				// never leave a waiter in BOOKING, nor a booking nobody gives back
				giveBack = (booking instanceof Booking.Booked booked) ? booked : null;
				if (next.queued()) {
					this.queue.fail(next, ex, after);
				}
			}
			finally {
				this.queue.lock().unlock();
			}
			Signals.emit(after);
			if (giveBack != null) {
				this.queue.giveBack(giveBack);
			}
		}
	}

	/**
	 * Returns the first waiter that may be booked now, marked {@code BOOKING}; fails
	 * waiters past their deadline, and sets the timer when none may be booked yet.
	 */
	private Waiter nextToBook(long now, Instant wallNow, List<Runnable> after) {
		runs(now, wallNow, after);
		return Admission.nextToBook(this.queue.classes(), this, now);
	}

	@Override
	public void look(Waiter waiter) {
		waiter.ask();
		waiter.refreshCharges();
	}

	@Override
	public boolean asked(Waiter waiter) {
		return waiter.asked();
	}

	/** The shared store says so itself; only its local fallback does not know. */
	@Override
	public boolean exhausted(Waiter waiter, long now) {
		return !this.store.status().reachable() && super.exhausted(waiter, now);
	}

	@Override
	public boolean needsDayCheck(Waiter waiter) {
		return waiter.needsDayCheck();
	}

	@Override
	public void bookShared(Waiter waiter) {
		waiter.startBooking();
	}

	@Override
	public void checkDay(Waiter waiter) {
		waiter.startDayCheck();
	}

	/**
	 * Looks at the daily limits of a call an in-flight bound holds, on the store thread
	 * and outside the lock, and fails it if one is spent beyond its deadline.
	 */
	private void checkDay(Waiter waiter, long now, Instant wallNow) {
		long wait = 0;
		Charge spent = null;
		for (Charge charge : waiter.charges) {
			if (charge.bucket().daily()) {
				long until;
				try {
					until = dayWait(charge, now, wallNow);
				}
				catch (RuntimeException ex) {
					until = 0;
				}
				if (until > wait) {
					wait = until;
					spent = charge;
				}
			}
		}
		List<Runnable> after = new ArrayList<>();
		this.queue.lock().lock();
		try {
			if (waiter.dayChecked() && spent != null && Admission.outlastsDeadline(true, wait, waiter.deadline, now)) {
				this.queue.fail(waiter, budgetException(waiter, spent.bucket(), wallNow, wait), after);
			}
		}
		finally {
			this.queue.lock().unlock();
		}
		Signals.emit(after);
	}

	/**
	 * Takes the shared store's answer for a waiter: admits it, schedules its start, lets
	 * it wait, or fails it. Returns a booking to give back when the waiter went
	 * meanwhile.
	 */
	private Booking.Booked settle(Waiter waiter, Booking booking, long now, Instant wallNow, List<Runnable> after) {
		if (!waiter.answered()) {
			// cancelled, or the engine closed, while the booking was on its way
			return (booking instanceof Booking.Booked booked) ? booked : null;
		}
		if (booking instanceof Booking.Booked booked) {
			waiter.pool.sharedBusyUntil(booked.start());
			booked(waiter, booked, now, after);
		}
		else if (booking instanceof Booking.Refused refused) {
			BucketSpec bucket = refused.bucket();
			waiter.pool.sharedBusyUntil(Arith.saturatedAdd(now, refused.waitNanos()));
			waiter.blockedBy(bucket.dimension(), bucket.scope(), bucket.slots());
			if (Admission.outlastsDeadline(bucket.daily(), refused.waitNanos(), waiter.deadline, now)) {
				this.queue.fail(waiter, budgetException(waiter, bucket, wallNow, refused.waitNanos()), after);
			}
			else {
				// Refused: no start in time, as the books stand. Refunds and releases
				// here ask again at once; those of other processes, unseen here, are
				// found by looking again soon. A batch call, asked only for now, comes
				// back when its buckets allow it.
				waiter.refusedByStore(now, refused.waitNanos(), bucket.slots(), pollNanos(waiter));
			}
		}
		else if (booking instanceof Booking.Penalized penalized) {
			sanctionsOf(waiter, penalized.sanctions()).penalize(penalized.dimension(),
					Arith.saturatedAdd(now, penalized.waitNanos()));
			long end = penaltyEnd(waiter, now);
			if (end > now) {
				runs(now, wallNow, after);
				hold(waiter, Admission.Hold.PENALTY, -1, null);
				waiter.readyAt(end);
			}
		}
		else if (booking instanceof Booking.Exhausted exhausted && exhausted.resetNanos() == 0) {
			// its reset is now (Redis drops a hold whose reset has passed as it reads
			// it): end it and ask again
			this.store.clearExhaustion(exhausted.sanctions());
			waiter.readyAt(now);
		}
		else if (booking instanceof Booking.Exhausted exhausted) {
			Sanctions.Exhaustion exhaustion = Sanctions.Exhaustion.after(exhausted.dimension(), exhausted.reason(),
					exhausted.resetNanos(), now, wallNow, Long.MAX_VALUE);
			sanctionsOf(waiter, exhausted.sanctions()).exhaust(exhaustion);
			this.queue.fail(waiter,
					exhaustedException(waiter, exhausted.dimension(), exhausted.reason(), exhaustion.until()), after);
		}
		else if (booking instanceof Booking.Unavailable unavailable) {
			this.queue.fail(waiter, new QuotaStoreUnavailableException(waiter.pool.provider(), waiter.pool.region(),
					waiter.pool.model(), unavailable.reason()), after);
		}
		return null;
	}

	/** A booking came back: the call starts now, or at its booked start. */
	private void booked(Waiter waiter, Booking.Booked booked, long now, List<Runnable> after) {
		this.queue.queueOf(waiter).remove(waiter);
		if (!booked.probe() && this.store.status().reachable()) {
			// the shared store holds no exhaustion for this call
			waiter.pool.sanctions().clearExhaustion();
			waiter.pool.account().sanctions().clearExhaustion();
		}
		long[] weights = Gates.take(waiter.gateUses);
		if (booked.start() <= now) {
			this.queue.admit(waiter, booked, weights, now, after);
			return;
		}
		waiter.scheduled(booked, weights);
		this.scheduled.add(waiter);
		waiter.startsWith(this.queue.clock().schedule(booked.start() - now, () -> start(waiter)));
	}

	private static Sanctions sanctionsOf(Waiter waiter, String key) {
		return key.equals(waiter.pool.sanctionsKey()) ? waiter.pool.sanctions() : waiter.pool.account().sanctions();
	}

	/**
	 * Admits a call booked ahead, at its start time. A rate limit or a spent quota heard
	 * since it was booked treats it as a waiting call: back in the queue until the
	 * penalty ends (failing at its deadline), or failed fast on a spent quota; its
	 * booking is given back either way.
	 */
	private void start(Waiter waiter) {
		List<Runnable> after = new ArrayList<>();
		Booking.Booked unstarted = null;
		this.queue.lock().lock();
		try {
			if (waiter.state() != Waiter.State.SCHEDULED) {
				return;
			}
			long now = this.queue.clock().nanoTime();
			runs(now, this.queue.clock().instant(), after);
			if (super.exhausted(waiter, now)) {
				unstarted = unschedule(waiter);
				fail(waiter, Admission.Failure.EXHAUSTED, now);
				// its gates are free: calls waiting for them may go
				run(after);
				return;
			}
			long end = penaltyEnd(waiter, now);
			if (end > now) {
				// back at the head of the queue, held as a waiting call is (its gates
				// free for others meanwhile, the penalty named should it time out): it
				// books again once the penalty ends
				unstarted = unschedule(waiter);
				waiter.waitsAgain();
				this.queue.queueOf(waiter).addFirst(waiter);
				hold(waiter, Admission.Hold.PENALTY, -1, null);
				waiter.readyAt(end);
				run(after);
				return;
			}
			this.scheduled.remove(waiter);
			Booking.Booked booked = waiter.started();
			this.queue.admit(waiter, booked, waiter.weights(), now, after);
		}
		finally {
			this.queue.lock().unlock();
			if (unstarted != null) {
				this.queue.giveBack(unstarted);
			}
			Signals.emit(after);
		}
	}

	/**
	 * How soon a call the shared store refused looks again: an eighth of the pool's call
	 * latency, between 10 ms and 500 ms.
	 */
	private static long pollNanos(Waiter waiter) {
		return Math.max(10_000_000L, Math.min(500_000_000L, waiter.pool.latencyNanos() / 8));
	}

}
