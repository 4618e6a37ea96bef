package dev.llmquota.core;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.ReentrantLock;

import dev.llmquota.core.kernel.Arith;
import reactor.core.Disposable;

/**
 * Orders the calls of one account's pools: interactive before batch, first come first
 * served within a class. The first waiting call (the head) is never delayed by a later
 * one: a later call is admitted ahead of it only when it fits now and leaves the head's
 * earliest admission time unchanged, so small calls use capacity the head cannot use yet
 * and the head is never starved. Waiting is non-blocking: one timer per account wakes the
 * queue when the next bucket refills or the next deadline passes.
 * <p>
 * This is the driver: the lock, the timer, the calls in flight and the signals. Where
 * calls are booked is its {@link Drain}: {@link LocalDrain} for books of this process,
 * {@link SharedDrain} for a store shared by many; both apply the same
 * {@link dev.llmquota.core.kernel.Admission rules}. {@link Corrections} takes each call's
 * usage into the books.
 */
final class AdmissionQueue {

	private final Account account;

	private final QuotaStore store;

	private final QuotaClock clock;

	private final QuotaSettings settings;

	private final QuotaEvents events;

	private final Drain drain;

	private final Corrections corrections;

	/**
	 * Whether no call waits in either line, as of the last time the lock was let go (and
	 * set at once when a call joins a line, before its line is run): a refund or a limit
	 * raised runs the lines only when someone is in them, without taking the lock.
	 */
	private volatile boolean nobodyWaits = true;

	private final ReentrantLock lock = new ReentrantLock() {

		private static final long serialVersionUID = 1L;

		@Override
		public void unlock() {
			if (getHoldCount() == 1) {
				AdmissionQueue.this.nobodyWaits = !anyoneQueued();
			}
			super.unlock();
		}

	};

	private final ArrayDeque<Waiter> interactive = new ArrayDeque<>();

	private final ArrayDeque<Waiter> batch = new ArrayDeque<>();

	private final List<ArrayDeque<Waiter>> classes = List.of(this.interactive, this.batch);

	private final LivePermits live = new LivePermits();

	private Disposable timer;

	private long timerAt = Long.MAX_VALUE;

	/**
	 * The one timer that ends the calls in flight past the lease timeout: set for the
	 * oldest call's end, not one per call, so an admission starts no timer.
	 */
	private Disposable leaseSweep;

	private volatile boolean closed;

	AdmissionQueue(Account account, QuotaStore store, QuotaClock clock, QuotaSettings settings, QuotaEvents events,
			Executor storeThread) {
		this.account = account;
		this.store = store;
		this.clock = clock;
		this.settings = settings;
		this.events = events;
		this.drain = (storeThread != null) ? new SharedDrain(this, account, settings, store, storeThread)
				: new LocalDrain(this, account, settings, store);
		this.corrections = new Corrections(this, store, clock, events, storeThread);
	}

	Corrections corrections() {
		return this.corrections;
	}

	void submit(Waiter waiter) {
		List<Runnable> after = new ArrayList<>();
		this.lock.lock();
		try {
			if (waiter.state() == Waiter.State.DONE) {
				// its subscriber cancelled as it subscribed, before it was queued: it
				// takes nothing
				return;
			}
			Charge beyond = waiter.beyondABudget();
			if (this.closed) {
				waiter.fail(QueueBooks.closedException(waiter), after);
			}
			else if (beyond != null) {
				waiter.fail(QueueBooks.beyondBudgetException(waiter, beyond), after);
			}
			else {
				queueOf(waiter).addLast(waiter);
				// before the line runs, so a refund that finds nobody waiting and skips
				// the lock (see wake) has reached the books this run reads
				this.nobodyWaits = false;
				this.drain.run(after);
			}
		}
		finally {
			this.lock.unlock();
		}
		Signals.emit(after);
	}

	/**
	 * Admits a call at once when nobody waits and the drain books here, or returns
	 * {@code null} having taken nothing.
	 */
	QuotaPermit tryAdmit(Waiter waiter) {
		// no array until a signal is added: a call admitted here signals nobody
		List<Runnable> after = new ArrayList<>();
		this.lock.lock();
		try {
			if (this.closed || anyoneQueued() || waiter.beyondABudget() != null
					|| !this.drain.admitsAlone(waiter, after)) {
				return null;
			}
		}
		finally {
			this.lock.unlock();
		}
		QuotaPermit permit = waiter.permit();
		// its caller is told by the return, its observers here (see Waiter.admit)
		this.events.admitted(waiter.pool, waiter.priority, permit.waitedNanos());
		Signals.emit(after);
		return permit;
	}

	/**
	 * How soon a call would be admitted were it asked now, behind the calls of its pool
	 * already waiting, taking nothing.
	 */
	Headroom headroom(Waiter probe) {
		this.lock.lock();
		try {
			List<Waiter> ahead = new ArrayList<>();
			for (ArrayDeque<Waiter> queue : this.classes) {
				for (Waiter waiter : queue) {
					if (waiter.pool == probe.pool && (queue == this.interactive || probe.priority == Priority.BATCH)) {
						ahead.add(waiter);
					}
				}
			}
			return this.drain.headroom(probe, ahead, this.clock.nanoTime(), this.clock.instant());
		}
		finally {
			this.lock.unlock();
		}
	}

	/** The waiter's subscriber went away: leave the queue, or give back what it got. */
	void cancel(Waiter waiter) {
		QuotaPermit permit = null;
		Booking.Booked unstarted = null;
		List<Runnable> after = new ArrayList<>();
		this.lock.lock();
		try {
			if (waiter.queued()) {
				// A booking on its way back is given back by the store thread.
				waiter.cancelled();
				queueOf(waiter).remove(waiter);
				// The head may have gone: later calls may now fit.
				this.drain.run(after);
			}
			else if (waiter.state() == Waiter.State.SCHEDULED) {
				waiter.cancelled();
				unstarted = this.drain.unschedule(waiter);
				this.drain.run(after);
			}
			else if (waiter.state() == Waiter.State.ADMITTED) {
				permit = waiter.permit();
			}
		}
		finally {
			this.lock.unlock();
		}
		Signals.emit(after);
		if (unstarted != null) {
			giveBack(unstarted);
		}
		if (permit != null) {
			// Admitted, but the permit never reached the subscriber: the call never
			// started.
			permit.cancel();
		}
	}

	void release(QuotaPermit permit, boolean completed) {
		List<Runnable> after = new ArrayList<>();
		this.lock.lock();
		try {
			if (!this.live.remove(permit)) {
				return;
			}
			Gates.release(permit.gateUses(), permit.weights());
			permit.pool().stats().released(permit.pool().reservedTokens(permit.demand()));
			if (permit.booking().lease() != null) {
				// before the queue runs: a call waiting for the shared slot finds it free
				this.store.release(permit.booking().lease());
			}
			this.drain.roomCameBack();
			if (completed) {
				long latency = this.clock.nanoTime() - permit.admittedAt();
				Pool pool = permit.pool();
				pool.latency().record(latency);
				pool.resizeGates(this.settings);
				this.account.latency().record(latency);
				this.account.resizeGates(this.settings);
			}
			this.drain.run(after);
		}
		finally {
			this.lock.unlock();
		}
		Signals.emit(after);
	}

	/**
	 * Runs the queue now, for example after a refund; with nobody waiting there is
	 * nothing to run, and the lock is left alone (a refund comes on the thread that read
	 * the answer, often an HTTP client's event loop).
	 */
	void wake() {
		if (this.nobodyWaits) {
			return;
		}
		List<Runnable> after = new ArrayList<>();
		this.lock.lock();
		try {
			this.drain.roomCameBack();
			this.drain.run(after);
		}
		finally {
			this.lock.unlock();
		}
		Signals.emit(after);
	}

	void close() {
		List<Runnable> after = new ArrayList<>();
		List<QuotaPermit> permits;
		List<Booking.Booked> unstarted = new ArrayList<>();
		this.lock.lock();
		try {
			this.closed = true;
			cancelTimer();
			if (this.leaseSweep != null) {
				this.leaseSweep.dispose();
				this.leaseSweep = null;
			}
			for (ArrayDeque<Waiter> queue : this.classes) {
				for (Waiter waiter : queue) {
					waiter.fail(QueueBooks.closedException(waiter), after);
				}
				queue.clear();
			}
			for (Waiter waiter : this.drain.scheduled()) {
				unstarted.add(this.drain.unschedule(waiter));
				waiter.fail(QueueBooks.closedException(waiter), after);
			}
			permits = this.live.all();
		}
		finally {
			this.lock.unlock();
		}
		Signals.emit(after);
		unstarted.forEach(this::giveBack);
		permits.forEach(QuotaPermit::release);
	}

	/** Whether a run of the queue was asked of the store thread and has not begun. */
	boolean drainPending() {
		return this.drain.pending();
	}

	int waiting() {
		this.lock.lock();
		try {
			// a call booked ahead in a shared store waits for its start: not admitted yet
			return this.interactive.size() + this.batch.size() + this.drain.scheduled().size();
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Calls of a pool and class not yet admitted: queued, being booked, or booked ahead.
	 */
	int waiting(Pool pool, Priority priority) {
		if (pool.spec().mode() == Mode.SHADOW) {
			// its twins wait, never its calls
			return 0;
		}
		this.lock.lock();
		try {
			int count = 0;
			for (Waiter waiter : queueOf(priority)) {
				count += (waiter.pool == pool) ? 1 : 0;
			}
			for (Waiter waiter : this.drain.scheduled()) {
				count += (waiter.pool == pool && waiter.priority == priority) ? 1 : 0;
			}
			return count;
		}
		finally {
			this.lock.unlock();
		}
	}

	int inFlight() {
		this.lock.lock();
		try {
			return this.live.size();
		}
		finally {
			this.lock.unlock();
		}
	}

	/** Runs a read of gate state under the lock. */
	<T> T read(java.util.function.Supplier<T> reader) {
		this.lock.lock();
		try {
			return reader.get();
		}
		finally {
			this.lock.unlock();
		}
	}

	// What the drains use, under the lock unless said otherwise.

	ReentrantLock lock() {
		return this.lock;
	}

	QuotaClock clock() {
		return this.clock;
	}

	boolean closed() {
		return this.closed;
	}

	/** Whether a call waits in either line. */
	boolean anyoneQueued() {
		return !this.interactive.isEmpty() || !this.batch.isEmpty();
	}

	/** The queues in the order they are served: interactive, then batch. */
	List<ArrayDeque<Waiter>> classes() {
		return this.classes;
	}

	ArrayDeque<Waiter> queueOf(Waiter waiter) {
		return queueOf(waiter.priority);
	}

	private ArrayDeque<Waiter> queueOf(Priority priority) {
		return (priority == Priority.BATCH) ? this.batch : this.interactive;
	}

	/** Fails a waiter and takes it off its queue. */
	void fail(Waiter waiter, RuntimeException error, List<Runnable> after) {
		queueOf(waiter).remove(waiter);
		waiter.fail(error, after);
	}

	/** Admits a call: it holds its booking and gates until its permit is released. */
	void admit(Waiter waiter, Booking.Booked booked, long[] weights, long now, List<Runnable> after) {
		QuotaPermit permit = new QuotaPermit(this, waiter, booked, weights, now);
		this.live.add(permit);
		waiter.pool.stats()
			.admitted(waiter.demand, waiter.pool.reservedTokens(waiter.demand), waiter.priority, permit.waitedNanos(),
					waiter.pool.spec().mode() == Mode.SHADOW);
		waiter.admit(permit, this.events, after);
		if (this.leaseSweep == null) {
			this.leaseSweep = this.clock.schedule(this.settings.leaseTimeout().toNanos(), this::sweepLeases);
		}
	}

	/**
	 * Ends the calls in flight longer than the lease timeout, and sets the sweep again
	 * for the next one to end.
	 */
	private void sweepLeases() {
		List<QuotaPermit> expired = new ArrayList<>();
		this.lock.lock();
		try {
			this.leaseSweep = null;
			long now = this.clock.nanoTime();
			long lease = this.settings.leaseTimeout().toNanos();
			long next = Long.MAX_VALUE;
			for (QuotaPermit permit : this.live.all()) {
				long end = Arith.saturatedAdd(permit.admittedAt(), lease);
				if (end <= now) {
					expired.add(permit);
				}
				else {
					next = Math.min(next, end);
				}
			}
			if (next != Long.MAX_VALUE && !this.closed) {
				this.leaseSweep = this.clock.schedule(next - now, this::sweepLeases);
			}
		}
		finally {
			this.lock.unlock();
		}
		expired.forEach(QuotaPermit::expire);
	}

	/** Gives back the booking of a permit whose call never started (see its cancel). */
	void giveBack(QuotaPermit permit) {
		this.store.cancel(permit.booking(), this.clock.nanoTime(), this.clock.instant());
	}

	/** Gives back a booking whose call never started: its units and its slots. */
	void giveBack(Booking.Booked booking) {
		this.store.cancel(booking, this.clock.nanoTime(), this.clock.instant());
		if (booking.lease() != null) {
			this.store.release(booking.lease());
		}
	}

	/** Runs the queue again at {@code wakeAt}, unless a timer already runs it sooner. */
	void wakeAt(long wakeAt, long now) {
		if (wakeAt == Long.MAX_VALUE) {
			return;
		}
		if (this.timer != null && this.timerAt <= wakeAt) {
			return;
		}
		cancelTimer();
		this.timerAt = wakeAt;
		this.timer = this.clock.schedule(Math.max(0, wakeAt - now), this::onTimer);
	}

	private void onTimer() {
		List<Runnable> after = new ArrayList<>();
		this.lock.lock();
		try {
			this.timer = null;
			this.timerAt = Long.MAX_VALUE;
			this.drain.run(after);
		}
		finally {
			this.lock.unlock();
		}
		Signals.emit(after);
	}

	private void cancelTimer() {
		if (this.timer != null) {
			this.timer.dispose();
			this.timer = null;
			this.timerAt = Long.MAX_VALUE;
		}
	}

}
