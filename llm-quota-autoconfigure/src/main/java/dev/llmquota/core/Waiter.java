package dev.llmquota.core;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import dev.llmquota.core.kernel.Admission;
import dev.llmquota.core.kernel.Arith;
import dev.llmquota.core.kernel.Gate;
import reactor.core.publisher.MonoSink;

/**
 * A call waiting for admission. What it asks for is fixed at creation; its state moves
 * only through the methods below, called under the account's admission lock:
 * {@code WAITING} to {@code BOOKING} and back (a shared store's answer on its way), to
 * {@code SCHEDULED} (booked ahead), to {@code ADMITTED}, or to {@code DONE} (failed,
 * timed out or cancelled). An admitted or failed call is signalled once, outside the
 * lock, through the list of signals the caller emits.
 */
final class Waiter implements Admission.Call {

	enum State {

		/** In the queue. */
		WAITING,

		/** In the queue, its booking on the way to a shared store and back. */
		BOOKING,

		/**
		 * Booked ahead in a shared store: out of the queue, holding its gates until its
		 * start time.
		 */
		SCHEDULED,

		ADMITTED,

		DONE

	}

	/**
	 * A gate the call must enter and the units it asks of it.
	 */
	record GateUse(InFlightGate gate, long units) {

	}

	final Pool pool;

	final Demand demand;

	final Priority priority;

	/**
	 * What the call takes; made again when a limit is learned or changed while it waits.
	 */
	List<Charge> charges;

	private List<BucketSpec> poolBuckets;

	private List<BucketSpec> accountBuckets;

	final List<GateUse> gateUses;

	final long enqueuedAt;

	final long deadline;

	private final MonoSink<QuotaPermit> sink;

	/** The interactive reserve this call keeps or records. */
	private final BookingRequest.Reserve reserve;

	private State state = State.WAITING;

	private QuotaPermit permit;

	/** The dimension that blocked the call last, named if it times out. */
	private Dimension blockedOn;

	private BucketSpec.Scope blockedScope = BucketSpec.Scope.POOL;

	/** Whether what blocked last was an in-flight bound rather than a bucket. */
	private boolean blockedInFlight;

	/** The exhausted sanctions whose probe this call would be, if admitted now. */
	private Sanctions probing;

	/** When the call's buckets (or a penalty) allow it, as last computed. */
	private long readyAt;

	/**
	 * Whether a shared store refused the call's booking on its buckets or slots: a refund
	 * or a release here makes it worth asking again before {@code readyAt}.
	 */
	private boolean refused;

	/**
	 * When the call's buckets would admit it as a shared store last answered, for the
	 * {@code Retry-After} of a timeout: {@code readyAt} may be sooner, to look again.
	 */
	private long availableAt;

	/** Whether a shared store was asked about the call at least once. */
	private boolean asked;

	/**
	 * Whether the store thread is to look at the call's daily limits, not book it: an
	 * in-flight bound holds it, and a spent day must fail it fast all the same.
	 */
	private boolean checkingDay;

	/** Whether the call's daily limits were looked at while a bound held it. */
	private boolean dayChecked;

	/** A booking ahead in a shared store, while {@code SCHEDULED}. */
	private Booking.Booked booked;

	/** The gate units taken at a booking ahead, while {@code SCHEDULED}. */
	private long[] weights;

	/** Admits a call booked ahead at its start time, while {@code SCHEDULED}. */
	private reactor.core.Disposable startTimer;

	private long probeIntervalNanos;

	private static final AtomicLong places = new AtomicLong();

	/**
	 * The call's place in the lines for shared slots: one per call, whatever its
	 * attempts; taken when it is first asked of a shared store (only the store thread
	 * asks), so a call booked in this process's books pays nothing for it.
	 */
	private String place;

	Waiter(Pool pool, Demand demand, Priority priority, long now, long maxWaitNanos, MonoSink<QuotaPermit> sink) {
		this.pool = pool;
		this.reserve = pool.account().reserve(priority);
		this.demand = demand;
		this.priority = priority;
		this.poolBuckets = pool.buckets();
		this.accountBuckets = pool.account().buckets();
		this.charges = pool.charges(demand);
		this.gateUses = Gates.uses(pool, demand);
		this.enqueuedAt = now;
		this.deadline = Arith.saturatedAdd(now, maxWaitNanos);
		this.sink = sink;
	}

	/** Takes limits learned or changed since the call was made into its charges. */
	void refreshCharges() {
		List<BucketSpec> own = this.pool.buckets();
		List<BucketSpec> shared = this.pool.account().buckets();
		if (own != this.poolBuckets || shared != this.accountBuckets) {
			this.poolBuckets = own;
			this.accountBuckets = shared;
			this.charges = this.pool.charges(this.demand);
		}
	}

	/** Returns what the call asks of a shared store. */
	BookingRequest bookingRequest() {
		List<BucketSpec> slots = this.pool.slots();
		List<BucketSpec> shared = this.pool.account().slots();
		List<BucketSpec> all = slots;
		if (!shared.isEmpty()) {
			all = new ArrayList<>(slots);
			all.addAll(shared);
		}
		return new BookingRequest(this.charges, all,
				List.of(this.pool.sanctionsKey(), this.pool.account().sanctionsKey()), this.reserve,
				all.isEmpty() ? null : place());
	}

	private String place() {
		if (this.place == null) {
			this.place = Long.toString(places.incrementAndGet());
		}
		return this.place;
	}

	/** Returns what the call asks of a store of this process: charges and reserve. */
	BookingRequest localBookingRequest() {
		return localBookingRequest(this.charges);
	}

	/**
	 * Returns what some charges ask of a store of this process, with the call's reserve.
	 */
	BookingRequest localBookingRequest(List<Charge> charges) {
		return new BookingRequest(charges, List.of(), List.of(), this.reserve);
	}

	/**
	 * Returns the call's charges with those of the given calls on the same buckets added:
	 * what its buckets must hold for it behind them.
	 */
	List<Charge> chargesBehind(List<Waiter> ahead) {
		List<Charge> sum = new ArrayList<>(this.charges.size());
		for (Charge charge : this.charges) {
			long units = charge.units();
			for (Waiter waiter : ahead) {
				for (Charge theirs : waiter.charges) {
					if (theirs.bucket().equals(charge.bucket())) {
						units = Arith.saturatedAdd(units, theirs.units());
					}
				}
			}
			sum.add(new Charge(charge.bucket(), units));
		}
		return sum;
	}

	@Override
	public long deadline() {
		return this.deadline;
	}

	@Override
	public int gates() {
		return this.gateUses.size();
	}

	@Override
	public Gate gate(int index) {
		return this.gateUses.get(index).gate();
	}

	@Override
	public long units(int index) {
		return this.gateUses.get(index).units();
	}

	void blockedBy(Dimension dimension, BucketSpec.Scope scope, boolean inFlight) {
		this.blockedOn = dimension;
		this.blockedScope = scope;
		this.blockedInFlight = inFlight;
	}

	void blockedLike(Waiter head) {
		if (head.blockedOn != null) {
			blockedBy(head.blockedOn, head.blockedScope, head.blockedInFlight);
		}
	}

	String blocker() {
		if (this.blockedOn == null) {
			// only a penalty names nothing: a 429 that named no dimension
			return this.blockedScope.id() + " rate limit (the provider named no dimension)";
		}
		Dimension dimension = this.blockedOn;
		String what = this.blockedScope.id() + " " + dimension.id();
		if (this.blockedInFlight && dimension != Dimension.CONCURRENT_REQUESTS) {
			return what + " in-flight bound (rate x latency)";
		}
		return what;
	}

	BucketSpec.Scope scopeOf(InFlightGate gate) {
		return this.pool.gates().contains(gate) ? BucketSpec.Scope.POOL : BucketSpec.Scope.ACCOUNT;
	}

	State state() {
		return this.state;
	}

	/** Whether the call is in the queue: waiting, or its booking on the way. */
	boolean queued() {
		return this.state == State.WAITING || this.state == State.BOOKING;
	}

	/** The call goes to a shared store to be booked; it keeps its place meanwhile. */
	void startBooking() {
		this.state = State.BOOKING;
		this.refused = false;
	}

	/**
	 * The call goes to the store thread to have its daily limits looked at, while an
	 * in-flight bound holds it.
	 */
	void startDayCheck() {
		this.state = State.BOOKING;
		this.checkingDay = true;
	}

	boolean checkingDay() {
		return this.checkingDay;
	}

	/** The look at its daily limits is back: the call waits again, if still booking. */
	boolean dayChecked() {
		this.checkingDay = false;
		this.dayChecked = true;
		return answered();
	}

	/**
	 * Returns the charge of a money budget the call may cost more than in whole, or
	 * {@code null}: no period makes room for it.
	 */
	Charge beyondABudget() {
		for (Charge charge : this.charges) {
			if (charge.bucket().dimension().countsMoney() && charge.units() > charge.bucket().enforced()) {
				return charge;
			}
		}
		return null;
	}

	/** Whether the daily limits still need a look while an in-flight bound holds it. */
	boolean needsDayCheck() {
		return !this.dayChecked && this.charges.stream().anyMatch((charge) -> charge.bucket().daily());
	}

	/**
	 * A shared store's answer is back: the call waits in the queue again. Returns
	 * {@code false} if it went meanwhile (cancelled, or the engine closed).
	 */
	boolean answered() {
		if (this.state != State.BOOKING) {
			return false;
		}
		this.state = State.WAITING;
		return true;
	}

	/**
	 * Booked ahead, then held before its start (a penalty heard since): back in the
	 * queue, its booking and gates given back by the caller.
	 */
	void waitsAgain() {
		this.state = State.WAITING;
	}

	/** Booked ahead: out of the queue, holding its gates until its start. */
	void scheduled(Booking.Booked booked, long[] weights) {
		this.state = State.SCHEDULED;
		this.booked = booked;
		this.weights = weights;
	}

	/** The timer that admits a call booked ahead at its start. */
	void startsWith(reactor.core.Disposable startTimer) {
		this.startTimer = startTimer;
	}

	long[] weights() {
		return this.weights;
	}

	/**
	 * Takes a call booked ahead off the schedule: stops its start timer. Returns its
	 * booking, to give back unless it starts now.
	 */
	Booking.Booked unscheduled() {
		if (this.startTimer != null) {
			this.startTimer.dispose();
			this.startTimer = null;
		}
		return this.booked;
	}

	/** Admits the call: it holds the permit, and its caller is told after the lock. */
	void admit(QuotaPermit permit, QuotaEvents events, List<Runnable> after) {
		if (this.probing != null) {
			this.probing.takeProbe(permit.admittedAt(), this.probeIntervalNanos);
		}
		this.permit = permit;
		this.state = State.ADMITTED;
		// without a sink it was admitted alone, at once: the call that admitted it tells
		// its caller and the observers
		if (this.sink != null) {
			after.add(() -> {
				if (this.pool.spec().mode() != Mode.SHADOW) {
					// a shadow twin's wait goes to the shadow meters alone
					events.admitted(this.pool, this.priority, permit.waitedNanos());
				}
				this.sink.success(permit);
			});
		}
	}

	/** The booking of a call booked ahead. */
	Booking.Booked booking() {
		return this.booked;
	}

	/** Its start time came: the timer that fired is done. Returns its booking. */
	Booking.Booked started() {
		this.startTimer = null;
		return this.booked;
	}

	QuotaPermit permit() {
		return this.permit;
	}

	/** Fails the call: its caller is told after the lock. */
	void fail(RuntimeException error, List<Runnable> after) {
		this.state = State.DONE;
		after.add(() -> this.sink.error(error));
	}

	/** The caller went away: the call ends with no signal. */
	void cancelled() {
		this.state = State.DONE;
	}

	@Override
	public long readyAt() {
		return this.readyAt;
	}

	/** When the call's buckets or a penalty allow it, as just computed. */
	void readyAt(long readyAt) {
		this.readyAt = readyAt;
	}

	/**
	 * A shared store refused the call: its buckets would allow it in {@code waitNanos}.
	 * It looks again then when that is exact and within its deadline, else sooner, since
	 * other processes' refunds and releases are unseen here.
	 * @param slots whether a slot (not a rate) refused it
	 */
	void refusedByStore(long now, long waitNanos, boolean slots, long pollNanos) {
		this.refused = true;
		this.availableAt = Arith.saturatedAdd(now, waitNanos);
		this.readyAt = Admission.lookAgainAt(now, waitNanos, slots, this.deadline, pollNanos);
	}

	/** Room came back here: a call a shared store refused asks again at once. */
	void roomCameBack(long now) {
		if (this.refused && this.readyAt > now) {
			this.readyAt = now;
		}
	}

	/** Marks the call asked of a shared store. */
	void ask() {
		this.asked = true;
	}

	boolean asked() {
		return this.asked;
	}

	/** The exhausted sanctions whose probe this call takes if admitted now, or none. */
	void probing(Sanctions sanctions, long intervalNanos) {
		this.probing = sanctions;
		this.probeIntervalNanos = intervalNanos;
	}

	/**
	 * When its buckets would admit it, as last computed ({@code readyAt} or the shared
	 * store's answer, whichever is later).
	 */
	long availableAt() {
		return Math.max(this.readyAt, this.availableAt);
	}

	Dimension blockedOn() {
		return this.blockedOn;
	}

}
