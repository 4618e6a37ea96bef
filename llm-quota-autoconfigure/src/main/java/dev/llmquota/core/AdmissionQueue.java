package dev.llmquota.core;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

import dev.llmquota.BudgetExhaustedException;
import dev.llmquota.QuotaEngineClosedException;
import dev.llmquota.QuotaExhaustedException;
import dev.llmquota.QuotaStoreUnavailableException;
import dev.llmquota.QuotaWaitTimeoutException;
import reactor.core.Disposable;

/**
 * Orders the calls of one account's pools: interactive before batch, first come first
 * served within a class. The first waiting call (the head) is never delayed by a later
 * one: a later call is admitted ahead of it only when it fits now and leaves the head's
 * earliest admission time unchanged, so small calls use capacity the head cannot use yet
 * and the head is never starved. Waiting is non-blocking: one timer per account wakes the
 * queue when the next bucket refills or the next deadline passes.
 * <p>
 * With a store shared by many processes the store orders the calls: each waiter, in queue
 * order, is booked once at the earliest time every bucket allows (one round trip), then
 * waits out its start here holding its local gates. Those bookings go out from the
 * engine's store thread only, never under the lock, so no caller's thread waits on the
 * network.
 */
final class AdmissionQueue {

	/** How many waiting calls one run of the queue tries to admit. */
	static final int BACKFILL_WINDOW = 256;

	private final Account account;

	private final QuotaStore store;

	private final QuotaClock clock;

	private final QuotaSettings settings;

	private final QuotaEvents events;

	/** The thread that talks to a shared store, or {@code null} for a local store. */
	private final Executor storeThread;

	private final AtomicBoolean drainRequested = new AtomicBoolean();

	/** Calls booked ahead in a shared store, waiting for their start. */
	private final Set<Waiter> scheduled = Collections.newSetFromMap(new IdentityHashMap<>());

	/**
	 * Signals produced on this thread while it is already signalling (see emit); empty
	 * and removed once the outermost signal returns.
	 */
	private static final ThreadLocal<ArrayDeque<Runnable>> pending = new ThreadLocal<>();

	private final ReentrantLock lock = new ReentrantLock();

	private final ArrayDeque<Waiter> interactive = new ArrayDeque<>();

	private final ArrayDeque<Waiter> batch = new ArrayDeque<>();

	private final Set<QuotaPermit> live = Collections.newSetFromMap(new IdentityHashMap<>());

	private Disposable timer;

	private long timerAt = Long.MAX_VALUE;

	private boolean closed;

	AdmissionQueue(Account account, QuotaStore store, QuotaClock clock, QuotaSettings settings, QuotaEvents events,
			Executor storeThread) {
		this.account = account;
		this.store = store;
		this.clock = clock;
		this.settings = settings;
		this.events = events;
		this.storeThread = storeThread;
	}

	void submit(Waiter waiter) {
		List<Runnable> after = new ArrayList<>();
		this.lock.lock();
		try {
			if (this.closed) {
				waiter.state = Waiter.State.DONE;
				after.add(() -> waiter.sink.error(closedException(waiter)));
			}
			else {
				((waiter.priority == Priority.BATCH) ? this.batch : this.interactive).addLast(waiter);
				run(after);
			}
		}
		finally {
			this.lock.unlock();
		}
		emit(after);
	}

	/** The waiter's subscriber went away: leave the queue, or give back what it got. */
	void cancel(Waiter waiter) {
		QuotaPermit permit = null;
		Booking.Booked unstarted = null;
		List<Runnable> after = new ArrayList<>();
		this.lock.lock();
		try {
			if (waiter.state == Waiter.State.WAITING || waiter.state == Waiter.State.BOOKING) {
				// A booking on its way back is given back by the store thread.
				waiter.state = Waiter.State.DONE;
				queueOf(waiter).remove(waiter);
				// The head may have gone: later calls may now fit.
				run(after);
			}
			else if (waiter.state == Waiter.State.SCHEDULED) {
				waiter.state = Waiter.State.DONE;
				unstarted = unschedule(waiter);
				run(after);
			}
			else if (waiter.state == Waiter.State.ADMITTED) {
				permit = waiter.permit;
			}
		}
		finally {
			this.lock.unlock();
		}
		emit(after);
		if (unstarted != null) {
			giveBack(unstarted);
		}
		if (permit != null) {
			// Admitted, but the permit never reached the subscriber: the call never
			// started.
			this.store.cancel(permit.booking(), this.clock.nanoTime(), this.clock.instant());
			permit.release();
		}
	}

	void release(QuotaPermit permit, boolean completed) {
		List<Runnable> after = new ArrayList<>();
		this.lock.lock();
		try {
			if (!this.live.remove(permit)) {
				return;
			}
			releaseGates(permit.gateUses(), permit.weights());
			permit.pool().stats().released(permit.demand());
			if (permit.booking().lease() != null) {
				// before the queue runs: a call waiting for the shared slot finds it free
				this.store.release(permit.booking().lease());
			}
			roomCameBack();
			if (completed) {
				long latency = this.clock.nanoTime() - permit.admittedAt();
				Pool pool = permit.pool();
				pool.latency().record(latency);
				pool.resizeGates(this.settings);
				this.account.latency().record(latency);
				this.account.resizeGates(this.settings);
			}
			run(after);
		}
		finally {
			this.lock.unlock();
		}
		emit(after);
	}

	/**
	 * A call ended with nothing reported (no answer, a cancel before any usage, an answer
	 * in no format llm-quota reads): it keeps what it reserved, and where the pool
	 * charges output only as reported, its output ceiling is charged now, since the
	 * provider may have generated all of it. Not usage: the output statistics do not see
	 * it.
	 * @param permit the call's permit
	 */
	void unreported(QuotaPermit permit) {
		Accounting accounting = permit.pool().spec().accounting();
		if (accounting.reserveMaxTokens() || permit.demand().outputCeiling() <= 0) {
			return;
		}
		long ceiling = accounting.burnedOutput(permit.demand().outputCeiling());
		List<Charge> charges = new ArrayList<>();
		for (Charge charge : permit.charges()) {
			if (charge.bucket().dimension().countsOutput()) {
				charges.add(new Charge(charge.bucket(), ceiling));
			}
		}
		if (!charges.isEmpty()) {
			this.store.correct(permit.booking(), charges, this.clock.nanoTime(), this.clock.instant());
		}
	}

	void reconcile(QuotaPermit permit, Usage usage) {
		Accounting accounting = permit.pool().spec().accounting();
		Demand demand = permit.demand();
		long inputDelta = usage.billedInputTokens(accounting.cachedInputCounts()) - demand.inputTokens();
		long actualOutput = accounting.burnedOutput(usage.outputTokens());
		long outputDelta;
		if (!accounting.reserveMaxTokens()) {
			outputDelta = actualOutput;
		}
		else {
			long reserved = accounting.burnedOutput(demand.outputCeiling());
			outputDelta = accounting.refundUnusedOutput() ? actualOutput - reserved
					: Math.max(0, actualOutput - reserved);
		}
		long reservedOutput = accounting.reserveMaxTokens() ? accounting.burnedOutput(demand.outputCeiling()) : 0;
		long billedOutput = reservedOutput + outputDelta;
		permit.pool().stats().output(reservedOutput, billedOutput, usage.outputTokens());
		this.events.reconciled(permit.pool(), demand, usage, reservedOutput, billedOutput);
		long now = this.clock.nanoTime();
		Instant wallNow = this.clock.instant();
		List<Charge> corrections = new ArrayList<>();
		boolean refunded = false;
		for (Charge charge : permit.charges()) {
			Dimension dimension = charge.bucket().dimension();
			long delta = (dimension.countsInput() ? inputDelta : 0) + (dimension.countsOutput() ? outputDelta : 0);
			if (dimension.countsMoney()) {
				// a budget is charged what the call cost, whatever it reserved
				delta = ((accounting.cost() != null) ? accounting.cost().micros(usage) : 0) - charge.units();
			}
			if (delta != 0 && (delta > 0 || permit.refundable(charge.bucket(), wallNow))) {
				corrections.add(new Charge(charge.bucket(), delta));
				refunded |= delta < 0;
			}
		}
		if (!corrections.isEmpty()) {
			this.store.correct(permit.booking(), corrections, now, wallNow);
		}
		if (refunded) {
			wake();
		}
		List<BucketSpec> budgets = permit.charges()
			.stream()
			.map(Charge::bucket)
			.filter((bucket) -> bucket.dimension().countsMoney())
			.toList();
		if (!budgets.isEmpty()) {
			// a shared store is read from its own thread, never a caller's
			Runnable check = () -> warnOfBudgets(budgets);
			if (this.storeThread == null) {
				check.run();
			}
			else if (!this.closed) {
				try {
					this.storeThread.execute(check);
				}
				catch (java.util.concurrent.RejectedExecutionException ex) {
					// closing: no warning needed
				}
			}
		}
	}

	/** Tells the observers of budgets spent beyond the entry's warning share. */
	private void warnOfBudgets(List<BucketSpec> budgets) {
		long now = this.clock.nanoTime();
		Instant wallNow = this.clock.instant();
		double warnAt = this.account.provider().budgetWarnAt();
		for (BucketSpec budget : budgets) {
			BucketState state = this.store.state(budget, now, wallNow);
			long spent = budget.enforced() - state.remaining();
			if (spent >= warnAt * budget.enforced()) {
				this.events.budgetWarning(this.account, budget.dimension(), spent, budget.enforced(),
						wallNow.plusNanos(state.nanosUntilFull()));
			}
		}
	}

	void refuse(QuotaPermit permit, boolean keepRequests) {
		long now = this.clock.nanoTime();
		Instant wallNow = this.clock.instant();
		List<Charge> refunds = new ArrayList<>();
		for (Charge charge : permit.charges()) {
			// a refused call costs nothing, whatever it counts against the limits
			Dimension dimension = charge.bucket().dimension();
			boolean give = dimension.countsTokens() || dimension.countsMoney() || !keepRequests;
			if (give && charge.units() > 0 && permit.refundable(charge.bucket(), wallNow)) {
				refunds.add(new Charge(charge.bucket(), -charge.units()));
			}
		}
		if (!refunds.isEmpty()) {
			this.store.correct(permit.booking(), refunds, now, wallNow);
		}
		wake();
	}

	/** Runs the queue now, for example after a refund. */
	void wake() {
		List<Runnable> after = new ArrayList<>();
		this.lock.lock();
		try {
			roomCameBack();
			run(after);
		}
		finally {
			this.lock.unlock();
		}
		emit(after);
	}

	void close() {
		List<Runnable> after = new ArrayList<>();
		List<QuotaPermit> permits;
		List<Booking.Booked> unstarted = new ArrayList<>();
		this.lock.lock();
		try {
			this.closed = true;
			cancelTimer();
			for (ArrayDeque<Waiter> queue : List.of(this.interactive, this.batch)) {
				for (Waiter waiter : queue) {
					waiter.state = Waiter.State.DONE;
					after.add(() -> waiter.sink.error(closedException(waiter)));
				}
				queue.clear();
			}
			for (Waiter waiter : new ArrayList<>(this.scheduled)) {
				waiter.state = Waiter.State.DONE;
				unstarted.add(unschedule(waiter));
				after.add(() -> waiter.sink.error(closedException(waiter)));
			}
			permits = new ArrayList<>(this.live);
		}
		finally {
			this.lock.unlock();
		}
		emit(after);
		unstarted.forEach(this::giveBack);
		permits.forEach(QuotaPermit::release);
	}

	/** Whether a run of the queue was asked of the store thread and has not begun. */
	boolean drainPending() {
		return this.drainRequested.get();
	}

	int waiting() {
		this.lock.lock();
		try {
			// a call booked ahead in a shared store waits for its start: not admitted yet
			return this.interactive.size() + this.batch.size() + this.scheduled.size();
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Calls of a pool and class not yet admitted: queued, being booked, or booked ahead.
	 */
	int waiting(Pool pool, Priority priority) {
		this.lock.lock();
		try {
			int count = 0;
			for (Waiter waiter : (priority == Priority.BATCH) ? this.batch : this.interactive) {
				count += (waiter.pool == pool) ? 1 : 0;
			}
			for (Waiter waiter : this.scheduled) {
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

	/**
	 * Signals admissions and failures outside the lock, on the thread that produced them:
	 * a caller that ends its call inside the signal releases its slot, which admits the
	 * next waiter; that signal is queued on this thread instead of recursing, so a long
	 * queue cannot overflow the stack, and no signal is deferred to another thread that
	 * the caller's subscriber does not expect.
	 */
	private static void emit(List<Runnable> after) {
		if (after.isEmpty()) {
			return;
		}
		ArrayDeque<Runnable> queued = pending.get();
		if (queued != null) {
			queued.addAll(after);
			return;
		}
		queued = new ArrayDeque<>(after);
		pending.set(queued);
		try {
			Runnable signal;
			while ((signal = queued.poll()) != null) {
				try {
					signal.run();
				}
				catch (RuntimeException ex) {
					// A subscriber's failure must not stop the signals of other callers.
					Thread.currentThread().getUncaughtExceptionHandler().uncaughtException(Thread.currentThread(), ex);
				}
			}
		}
		finally {
			pending.remove();
		}
	}

	/**
	 * Room came back here (a refund, a release): calls a shared store refused are asked
	 * again at once rather than at the time it gave, which assumed nothing would come
	 * back. A local store's waiters are tried on every run anyway.
	 */
	private void roomCameBack() {
		if (this.storeThread == null) {
			return;
		}
		long now = this.clock.nanoTime();
		for (ArrayDeque<Waiter> queue : List.of(this.interactive, this.batch)) {
			for (Waiter waiter : queue) {
				if (waiter.refused && waiter.readyAt > now) {
					waiter.readyAt = now;
				}
			}
		}
	}

	/**
	 * Runs the queue: here under the lock, or, with a shared store, on the store thread.
	 */
	private void run(List<Runnable> after) {
		if (this.storeThread == null) {
			drain(after);
		}
		else if (!this.closed && this.drainRequested.compareAndSet(false, true)) {
			try {
				this.storeThread.execute(this::drainShared);
			}
			catch (java.util.concurrent.RejectedExecutionException ex) {
				// the engine is closing: every waiter fails with it
			}
		}
	}

	/**
	 * Books waiters in queue order in the shared store, one round trip each, until none
	 * can be booked now; runs on the store thread only.
	 */
	private void drainShared() {
		this.drainRequested.set(false);
		while (true) {
			List<Runnable> after = new ArrayList<>();
			Waiter next;
			long now;
			Instant wallNow;
			this.lock.lock();
			try {
				if (this.closed) {
					return;
				}
				now = this.clock.nanoTime();
				wallNow = this.clock.instant();
				next = nextToBook(now, wallNow, after);
			}
			finally {
				this.lock.unlock();
			}
			emit(after);
			if (next == null) {
				return;
			}
			if (next.checkingDay) {
				checkDay(next, now, wallNow);
				continue;
			}
			Booking booking;
			try {
				// A batch call is booked only to start now: booked ahead, it would keep
				// its
				// place against interactive calls that come after it.
				long latest = (next.priority == Priority.BATCH) ? now : next.deadline;
				booking = this.store.book(next.claim(), now, wallNow, latest);
			}
			catch (RuntimeException ex) {
				booking = new Booking.Unavailable(String.valueOf(ex.getMessage()));
			}
			Booking.Booked giveBack = null;
			this.lock.lock();
			try {
				giveBack = settle(next, booking, now, wallNow, after);
			}
			catch (RuntimeException ex) {
				// never leave a waiter in BOOKING, nor a booking nobody gives back
				giveBack = (booking instanceof Booking.Booked booked) ? booked : null;
				if (next.state == Waiter.State.WAITING || next.state == Waiter.State.BOOKING) {
					fail(next, ex, after);
				}
			}
			finally {
				this.lock.unlock();
			}
			emit(after);
			if (giveBack != null) {
				giveBack(giveBack);
			}
		}
	}

	/**
	 * Returns the first waiter that may be booked now, marked {@code BOOKING}; fails
	 * waiters past their deadline, and sets the timer when none may be booked yet.
	 */
	private Waiter nextToBook(long now, Instant wallNow, List<Runnable> after) {
		long nextWake = Long.MAX_VALUE;
		int tried = 0;
		// the first call that waits on: no later call may take gate room it needs
		Waiter head = null;
		for (ArrayDeque<Waiter> queue : List.of(this.interactive, this.batch)) {
			for (Iterator<Waiter> it = queue.iterator(); it.hasNext();) {
				Waiter waiter = it.next();
				if (waiter.state != Waiter.State.WAITING) {
					continue;
				}
				// a call is asked about once, even with no time to wait at all
				if (waiter.deadline <= now && waiter.asked) {
					it.remove();
					timeOut(waiter, now, after);
					continue;
				}
				nextWake = Math.min(nextWake, Math.max(waiter.deadline, now));
				if (tried++ >= BACKFILL_WINDOW) {
					continue;
				}
				waiter.asked = true;
				waiter.refreshCharges();
				if (!this.store.status().reachable() && exhausted(waiter, now, wallNow, after)) {
					// the shared store would say so; its local fallback does not know
					it.remove();
					continue;
				}
				if (penalized(waiter, now)) {
					nextWake = Math.min(nextWake, waiter.readyAt);
					head = (head != null) ? head : waiter;
					continue;
				}
				if (waiter.readyAt > now) {
					nextWake = Math.min(nextWake, waiter.readyAt);
					head = (head != null) ? head : waiter;
					continue;
				}
				Waiter.GateUse blocking = waiter.blockingGate();
				if (blocking != null) {
					// a release runs the queue again
					waiter.blockedBy(blocking.gate().dimension(), waiter.scopeOf(blocking.gate()), true);
					head = (head != null) ? head : waiter;
					if (!waiter.dayChecked && waiter.charges.stream().anyMatch((c) -> c.bucket().daily())) {
						// a spent day fails the call now, not once the bound opens
						waiter.state = Waiter.State.BOOKING;
						waiter.checkingDay = true;
						return waiter;
					}
					continue;
				}
				if (head != null && takesGateRoomOf(head, waiter)) {
					waiter.blockedLike(head);
					continue;
				}
				waiter.state = Waiter.State.BOOKING;
				waiter.refused = false;
				return waiter;
			}
		}
		schedule(nextWake, now);
		return null;
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
					until = this.store.nanosUntilAvailable(List.of(charge), now, wallNow);
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
		this.lock.lock();
		try {
			waiter.checkingDay = false;
			waiter.dayChecked = true;
			if (waiter.state == Waiter.State.BOOKING) {
				waiter.state = Waiter.State.WAITING;
				if (spent != null && wait > waiter.deadline - now) {
					fail(waiter, budgetException(waiter, spent.bucket(), wallNow.plus(Duration.ofNanos(wait))), after);
				}
			}
		}
		finally {
			this.lock.unlock();
		}
		emit(after);
	}

	/**
	 * Takes a shared store's answer for a waiter: admits it, schedules its start, lets it
	 * wait, or fails it. Returns a booking to give back when the waiter went meanwhile.
	 */
	private Booking.Booked settle(Waiter waiter, Booking booking, long now, Instant wallNow, List<Runnable> after) {
		if (waiter.state != Waiter.State.BOOKING) {
			// cancelled, or the engine closed, while the booking was on its way
			return (booking instanceof Booking.Booked booked) ? booked : null;
		}
		waiter.state = Waiter.State.WAITING;
		if (booking instanceof Booking.Booked booked) {
			queueOf(waiter).remove(waiter);
			if (!booked.probe() && this.store.status().reachable()) {
				// the shared store holds no exhaustion for this call
				waiter.pool.hold().clearExhaustion();
				this.account.hold().clearExhaustion();
			}
			long[] weights = takeGates(waiter);
			if (booked.start() <= now) {
				admit(waiter, booked, weights, now, after);
			}
			else {
				waiter.state = Waiter.State.SCHEDULED;
				waiter.booked = booked;
				waiter.weights = weights;
				this.scheduled.add(waiter);
				waiter.startTimer = this.clock.schedule(booked.start() - now, () -> start(waiter));
			}
		}
		else if (booking instanceof Booking.Refused refused) {
			BucketSpec bucket = refused.bucket();
			waiter.blockedBy(bucket.dimension(), bucket.scope(), bucket.slots());
			if (bucket.daily() && refused.waitNanos() > waiter.deadline - now) {
				fail(waiter, budgetException(waiter, bucket, wallNow.plus(Duration.ofNanos(refused.waitNanos()))),
						after);
			}
			else {
				// Refused: no start in time, as the books stand. Refunds and releases
				// here ask again at once; those of other processes, unseen here, are
				// found by looking again soon. A batch call, asked only for now, comes
				// back when its buckets allow it.
				waiter.refused = true;
				waiter.availableAt = Arith.saturatedAdd(now, refused.waitNanos());
				boolean exact = !bucket.slots() && waiter.availableAt <= waiter.deadline;
				waiter.readyAt = exact ? waiter.availableAt : now + Math.min(refused.waitNanos(), pollNanos(waiter));
			}
		}
		else if (booking instanceof Booking.Held held) {
			Hold hold = held.hold().equals(waiter.pool.holdKey()) ? waiter.pool.hold() : this.account.hold();
			hold.penalize(held.dimension(), Arith.saturatedAdd(now, held.waitNanos()));
			penalized(waiter, now);
		}
		else if (booking instanceof Booking.Exhausted exhausted && exhausted.until() != null
				&& !exhausted.until().isAfter(wallNow)) {
			// its reset has passed by this process's clock (Redis drops the hold by its
			// own, which may lag): end it and ask again
			this.store.clearExhaustion(exhausted.hold());
			waiter.readyAt = now;
		}
		else if (booking instanceof Booking.Exhausted exhausted) {
			boolean pool = exhausted.hold().equals(waiter.pool.holdKey());
			(pool ? waiter.pool.hold() : this.account.hold()).exhaust(new Hold.Exhaustion(exhausted.dimension(),
					exhausted.reason(), exhausted.until(), Long.MAX_VALUE, now));
			fail(waiter,
					new QuotaExhaustedException(waiter.pool.provider(), waiter.pool.region(), waiter.pool.model(),
							(exhausted.dimension() != null) ? exhausted.dimension().id() : null, exhausted.reason(),
							exhausted.until()),
					after);
		}
		else if (booking instanceof Booking.Unavailable unavailable) {
			fail(waiter, new QuotaStoreUnavailableException(waiter.pool.provider(), waiter.pool.region(),
					waiter.pool.model(), unavailable.reason()), after);
		}
		return null;
	}

	/** Admits a call booked ahead, at its start time. */
	private void start(Waiter waiter) {
		List<Runnable> after = new ArrayList<>();
		this.lock.lock();
		try {
			if (waiter.state != Waiter.State.SCHEDULED) {
				return;
			}
			this.scheduled.remove(waiter);
			waiter.startTimer = null;
			admit(waiter, waiter.booked, waiter.weights, this.clock.nanoTime(), after);
		}
		finally {
			this.lock.unlock();
		}
		emit(after);
	}

	/** Takes a call booked ahead off the schedule; returns its booking to give back. */
	private Booking.Booked unschedule(Waiter waiter) {
		this.scheduled.remove(waiter);
		if (waiter.startTimer != null) {
			waiter.startTimer.dispose();
			waiter.startTimer = null;
		}
		releaseGates(waiter.gateUses, waiter.weights);
		return waiter.booked;
	}

	/** Gives back a booking whose call never started: its units and its slots. */
	private void giveBack(Booking.Booked booking) {
		this.store.cancel(booking, this.clock.nanoTime(), this.clock.instant());
		if (booking.lease() != null) {
			this.store.release(booking.lease());
		}
	}

	/**
	 * Whether a provider penalty heard here holds the waiter now; sets what blocks it and
	 * when it may go.
	 */
	private boolean penalized(Waiter waiter, long now) {
		long penalty = Math.max(waiter.pool.hold().penaltyEnd(now), this.account.hold().penaltyEnd(now));
		if (penalty <= now) {
			return false;
		}
		Dimension dimension = waiter.pool.hold().penalized(now);
		waiter.blockedBy((dimension != null) ? dimension : this.account.hold().penalized(now),
				(dimension != null) ? BucketSpec.Scope.POOL : BucketSpec.Scope.ACCOUNT, false);
		waiter.readyAt = penalty;
		return true;
	}

	/**
	 * How soon a call a shared store refused looks again: an eighth of the pool's call
	 * latency, between 10 ms and 500 ms.
	 */
	private static long pollNanos(Waiter waiter) {
		return Math.max(10_000_000L, Math.min(500_000_000L, waiter.pool.latencyNanos() / 8));
	}

	/** Fails a waiter whose deadline passed; the caller has taken it off its queue. */
	private void timeOut(Waiter waiter, long now, List<Runnable> after) {
		waiter.state = Waiter.State.DONE;
		after.add(() -> waiter.sink.error(timeoutException(waiter, now)));
	}

	private void fail(Waiter waiter, RuntimeException error, List<Runnable> after) {
		queueOf(waiter).remove(waiter);
		waiter.state = Waiter.State.DONE;
		after.add(() -> waiter.sink.error(error));
	}

	private void drain(List<Runnable> after) {
		if (this.closed) {
			return;
		}
		long now = this.clock.nanoTime();
		Instant wallNow = this.clock.instant();
		long nextWake = Long.MAX_VALUE;
		Waiter head = null;
		long headAt = now;
		int tried = 0;
		boolean admitted = false;
		for (ArrayDeque<Waiter> queue : List.of(this.interactive, this.batch)) {
			for (Iterator<Waiter> it = queue.iterator(); it.hasNext();) {
				Waiter waiter = it.next();
				// Beyond the backfill window only deadlines are checked, so one release
				// costs
				// little even behind a queue of thousands.
				long retryAt = (tried++ < BACKFILL_WINDOW) ? attempt(waiter, head, headAt, now, wallNow, after)
						: Long.MAX_VALUE;
				if (waiter.state != Waiter.State.WAITING) {
					admitted |= waiter.state == Waiter.State.ADMITTED;
					it.remove();
					continue;
				}
				if (waiter.deadline <= now) {
					it.remove();
					timeOut(waiter, now, after);
					continue;
				}
				nextWake = Math.min(nextWake, Math.min(retryAt, waiter.deadline));
				if (head == null) {
					head = waiter;
					headAt = Math.max(now, waiter.readyAt);
				}
			}
		}
		if (admitted && tried > BACKFILL_WINDOW) {
			// Calls beyond the window were not tried; the ones ahead made room, so run
			// again.
			nextWake = now;
		}
		schedule(nextWake, now);
	}

	/**
	 * Tries to admit one waiter. Returns when a timer should try again ({@code MAX_VALUE}
	 * when a release or the head's admission will); sets the waiter's state when it is
	 * admitted or failed, and its {@code readyAt}: when its buckets allow it.
	 */
	private long attempt(Waiter waiter, Waiter head, long headAt, long now, Instant wallNow, List<Runnable> after) {
		if (exhausted(waiter, now, wallNow, after)) {
			return Long.MAX_VALUE;
		}
		waiter.refreshCharges();
		if (penalized(waiter, now)) {
			return waiter.readyAt;
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
				waiter.readyAt = Arith.saturatedAdd(now,
						this.store.nanosUntilAvailable(waiter.localClaim(), now, wallNow));
			}
			return Long.MAX_VALUE;
		}
		if (head != null && takesGateRoomOf(head, waiter)) {
			waiter.blockedLike(head);
			return Long.MAX_VALUE;
		}
		Booking booking = this.store.book(waiter.localClaim(), now, wallNow, now);
		if (booking instanceof Booking.Refused refused) {
			waiter.blockedBy(refused.bucket().dimension(), refused.bucket().scope(), false);
			if (refused.bucket().daily() && refused.waitNanos() > waiter.deadline - now) {
				waiter.state = Waiter.State.DONE;
				Instant reset = wallNow.plus(Duration.ofNanos(refused.waitNanos()));
				after.add(() -> waiter.sink.error(budgetException(waiter, refused.bucket(), reset)));
				return Long.MAX_VALUE;
			}
			waiter.readyAt = Arith.saturatedAdd(now, refused.waitNanos());
			return waiter.readyAt;
		}
		Booking.Booked booked = (Booking.Booked) booking;
		if (booked.start() > now) {
			// Asked to start now, a store must not book later; if one does, wait for that
			// time instead.
			this.store.cancel(booked, now, wallNow);
			waiter.readyAt = booked.start();
			return booked.start();
		}
		if (head != null) {
			long headWait = this.store.nanosUntilAvailable(head.localClaim(), now, wallNow);
			if (Arith.saturatedAdd(now, headWait) > headAt) {
				// Admitting this call would delay the head: give its units back and let
				// it wait.
				this.store.cancel(booked, now, wallNow);
				waiter.blockedLike(head);
				return Long.MAX_VALUE;
			}
		}
		admit(waiter, booked, takeGates(waiter), now, after);
		return Long.MAX_VALUE;
	}

	/**
	 * Fails a call fast while its pool or account is exhausted, but lets one probe
	 * through now and then where the provider gave no reset.
	 */
	private boolean exhausted(Waiter waiter, long now, Instant wallNow, List<Runnable> after) {
		waiter.probing = null;
		for (Hold hold : List.of(this.account.hold(), waiter.pool.hold())) {
			Hold.Exhaustion exhaustion = hold.exhaustion(wallNow);
			if (exhaustion != null && hold.probeDue(now)) {
				// the probe is taken only if this call is admitted now
				waiter.probing = hold;
			}
			else if (exhaustion != null) {
				waiter.state = Waiter.State.DONE;
				after.add(() -> waiter.sink
					.error(new QuotaExhaustedException(waiter.pool.provider(), waiter.pool.region(),
							waiter.pool.model(), (exhaustion.dimension() != null) ? exhaustion.dimension().id() : null,
							exhaustion.reason(), exhaustion.until())));
				return true;
			}
		}
		return false;
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
			if (wait > 0 && wait > waiter.deadline - now) {
				waiter.state = Waiter.State.DONE;
				Instant reset = wallNow.plus(Duration.ofNanos(wait));
				after.add(() -> waiter.sink.error(budgetException(waiter, charge.bucket(), reset)));
				return true;
			}
		}
		return false;
	}

	/** Whether the waiter would take gate room the head needs. */
	private boolean takesGateRoomOf(Waiter head, Waiter waiter) {
		Waiter.GateUse headBlocking = head.blockingGate();
		for (Waiter.GateUse use : waiter.gateUses) {
			long headUnits = head.unitsOf(use.gate());
			if (headUnits < 0) {
				continue;
			}
			InFlightGate gate = use.gate();
			if (headBlocking != null && headBlocking.gate() == gate) {
				return true;
			}
			if (gate.inUse() + gate.weight(use.units()) + gate.weight(headUnits) > gate.capacity()) {
				return true;
			}
		}
		return false;
	}

	private static long[] takeGates(Waiter waiter) {
		List<Waiter.GateUse> uses = waiter.gateUses;
		long[] weights = new long[uses.size()];
		for (int i = 0; i < uses.size(); i++) {
			weights[i] = uses.get(i).gate().take(uses.get(i).units());
		}
		return weights;
	}

	private static void releaseGates(List<Waiter.GateUse> uses, long[] weights) {
		for (int i = 0; i < uses.size(); i++) {
			uses.get(i).gate().release(weights[i]);
		}
	}

	private void admit(Waiter waiter, Booking.Booked booked, long[] weights, long now, List<Runnable> after) {
		if (waiter.probing != null) {
			waiter.probing.takeProbe(now, this.settings.exhaustedProbeInterval().toNanos());
		}
		QuotaPermit permit = new QuotaPermit(this, waiter, booked, weights, now);
		this.live.add(permit);
		waiter.pool.stats().admitted(waiter.demand, waiter.priority, permit.waitedNanos());
		after.add(() -> this.events.admitted(waiter.pool, waiter.priority, permit.waitedNanos()));
		waiter.permit = permit;
		waiter.state = Waiter.State.ADMITTED;
		permit.leaseTimer = this.clock.schedule(this.settings.leaseTimeout().toNanos(), permit::expire);
		after.add(() -> waiter.sink.success(permit));
	}

	private void schedule(long wakeAt, long now) {
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
			run(after);
		}
		finally {
			this.lock.unlock();
		}
		emit(after);
	}

	private void cancelTimer() {
		if (this.timer != null) {
			this.timer.dispose();
			this.timer = null;
			this.timerAt = Long.MAX_VALUE;
		}
	}

	private ArrayDeque<Waiter> queueOf(Waiter waiter) {
		return (waiter.priority == Priority.BATCH) ? this.batch : this.interactive;
	}

	private QuotaWaitTimeoutException timeoutException(Waiter waiter, long now) {
		Dimension dimension = (waiter.blockedOn != null) ? waiter.blockedOn : Dimension.REQUESTS_PER_MINUTE;
		// when its buckets (or a penalty) would admit it, as last computed; unknown while
		// an in-flight bound or the head of the queue held it
		long availableAt = Math.max(waiter.readyAt, waiter.availableAt);
		Duration retryAfter = (availableAt > now) ? Duration.ofNanos(availableAt - now) : null;
		return new QuotaWaitTimeoutException(waiter.pool.provider(), waiter.pool.region(), waiter.pool.model(),
				dimension.id(), waiter.blocker(), Duration.ofNanos(now - waiter.enqueuedAt), retryAfter);
	}

	private BudgetExhaustedException budgetException(Waiter waiter, BucketSpec bucket, Instant reset) {
		return new BudgetExhaustedException(waiter.pool.provider(), waiter.pool.region(), waiter.pool.model(),
				bucket.dimension().id(), bucket.scope().id(), reset);
	}

	private QuotaEngineClosedException closedException(Waiter waiter) {
		return new QuotaEngineClosedException(waiter.pool.provider(), waiter.pool.region(), waiter.pool.model());
	}

}
