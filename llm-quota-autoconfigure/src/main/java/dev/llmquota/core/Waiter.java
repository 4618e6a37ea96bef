package dev.llmquota.core;

import java.util.ArrayList;
import java.util.List;

import reactor.core.publisher.MonoSink;

/**
 * A call waiting for admission. Its fields other than {@code state} are fixed at
 * creation; {@code state} and {@code permit} change under the account's admission lock.
 */
final class Waiter {

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

	final MonoSink<QuotaPermit> sink;

	/** The interactive reserve this call keeps or records. */
	private final Claim.Reserve reserve;

	State state = State.WAITING;

	QuotaPermit permit;

	/** The dimension that blocked the call last, named if it times out. */
	Dimension blockedOn;

	BucketSpec.Scope blockedScope = BucketSpec.Scope.POOL;

	/** Whether what blocked last was an in-flight bound rather than a bucket. */
	boolean blockedInFlight;

	/** The exhausted hold whose probe this call would be, if admitted now. */
	Hold probing;

	/** When the call's buckets allow it, as last computed. */
	long readyAt;

	/**
	 * Whether a shared store refused the call's booking on its buckets or slots: a refund
	 * or a release here makes it worth asking again before {@code readyAt}.
	 */
	boolean refused;

	/**
	 * When the call's buckets would admit it as a shared store last answered, for the
	 * {@code Retry-After} of a timeout: {@code readyAt} may be sooner, to look again.
	 */
	long availableAt;

	/** Whether a shared store was asked about the call at least once. */
	boolean asked;

	/**
	 * Whether the store thread is to look at the call's daily limits, not book it: an
	 * in-flight bound holds it, and a spent day must fail it fast all the same.
	 */
	boolean checkingDay;

	/** Whether the call's daily limits were looked at while a bound held it. */
	boolean dayChecked;

	/** A booking ahead in a shared store, while {@code SCHEDULED}. */
	Booking.Booked booked;

	/** The gate units taken at a booking ahead, while {@code SCHEDULED}. */
	long[] weights;

	/** Admits a call booked ahead at its start time, while {@code SCHEDULED}. */
	reactor.core.Disposable startTimer;

	Waiter(Pool pool, Demand demand, Priority priority, long now, long maxWaitNanos, MonoSink<QuotaPermit> sink,
			QuotaSettings settings) {
		this.pool = pool;
		this.reserve = new Claim.Reserve(priority == Priority.BATCH, pool.account().reserveKey(),
				settings.interactiveReserve(), settings.lendAfter().toNanos());
		this.demand = demand;
		this.priority = priority;
		this.poolBuckets = pool.buckets();
		this.accountBuckets = pool.account().buckets();
		this.charges = pool.charges(demand);
		this.gateUses = gateUses(pool, demand);
		this.enqueuedAt = now;
		this.deadline = Arith.saturatedAdd(now, maxWaitNanos);
		this.sink = sink;
	}

	private static List<GateUse> gateUses(Pool pool, Demand demand) {
		Accounting accounting = pool.spec().accounting();
		long expectedOutput = pool.expectedOutput(demand);
		List<GateUse> uses = new ArrayList<>();
		for (InFlightGate gate : pool.gates()) {
			uses.add(new GateUse(gate, Gates.units(gate, demand, accounting, expectedOutput)));
		}
		for (InFlightGate gate : pool.account().gates()) {
			uses.add(new GateUse(gate, Gates.units(gate, demand, accounting, expectedOutput)));
		}
		return List.copyOf(uses);
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
	Claim claim() {
		List<BucketSpec> slots = this.pool.slots();
		List<BucketSpec> shared = this.pool.account().slots();
		List<BucketSpec> all = slots;
		if (!shared.isEmpty()) {
			all = new ArrayList<>(slots);
			all.addAll(shared);
		}
		return new Claim(this.charges, all, List.of(this.pool.holdKey(), this.pool.account().holdKey()), this.reserve);
	}

	/** Returns what the call asks of a store of this process: charges and reserve. */
	Claim localClaim() {
		return new Claim(this.charges, List.of(), List.of(), this.reserve);
	}

	/** Returns the first gate the call does not fit now, or {@code null}. */
	GateUse blockingGate() {
		for (GateUse use : this.gateUses) {
			if (!use.gate().fits(use.units())) {
				return use;
			}
		}
		return null;
	}

	/**
	 * Returns the units this call asks of the given gate, or -1 if it does not use it.
	 */
	long unitsOf(InFlightGate gate) {
		for (GateUse use : this.gateUses) {
			if (use.gate() == gate) {
				return use.units();
			}
		}
		return -1;
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
		Dimension dimension = (this.blockedOn != null) ? this.blockedOn : Dimension.REQUESTS_PER_MINUTE;
		String what = this.blockedScope.id() + " " + dimension.id();
		if (this.blockedInFlight && dimension != Dimension.CONCURRENT_REQUESTS) {
			return what + " in-flight bound (rate x latency)";
		}
		return what;
	}

	BucketSpec.Scope scopeOf(InFlightGate gate) {
		return this.pool.gates().contains(gate) ? BucketSpec.Scope.POOL : BucketSpec.Scope.ACCOUNT;
	}

}
