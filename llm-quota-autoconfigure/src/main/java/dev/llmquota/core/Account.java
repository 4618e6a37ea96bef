package dev.llmquota.core;

import java.time.LocalDate;
import java.util.List;

/**
 * A provider entry's shared ceilings at run time: its buckets, its in-flight gates, and
 * the admission queue that orders the calls of all its pools.
 */
public final class Account {

	private final ProviderSpec provider;

	private final QuotaSettings settings;

	private volatile Limits limits;

	private volatile List<BucketSpec> buckets;

	private volatile List<BucketSpec> slots;

	private final String sanctionsKey;

	private final String limitsKey;

	private final String reserveKey;

	/** The interactive reserve of an interactive call and of a batch call: one each. */
	private final BookingRequest.Reserve interactiveReserve;

	private final BookingRequest.Reserve batchReserve;

	private final Gates gates;

	private final LatencyEstimate latency;

	private final AdmissionQueue queue;

	private final Sanctions sanctions = new Sanctions();

	/**
	 * What budgets were charged beyond calls' exact costs today, under a millionth: it
	 * pays later calls of the same day, never a new day's.
	 */
	private double costCredit;

	/** The day {@link #costCredit} was earned on. */
	private LocalDate creditDay;

	Account(ProviderSpec provider, QuotaSettings settings, QuotaStore store, QuotaClock clock, QuotaEvents events,
			long expectedLatencyNanos, java.util.concurrent.Executor storeThread) {
		this.provider = provider;
		this.settings = settings;
		this.limits = provider.account();
		this.buckets = Buckets.of(provider, BucketSpec.Scope.ACCOUNT, "account", provider.account(),
				provider.accountBurstWindow(), settings);
		this.slots = Buckets.slots(provider, BucketSpec.Scope.ACCOUNT, "account", provider.account(), settings);
		this.sanctionsKey = Buckets.key(provider, "account", "hold");
		this.limitsKey = Buckets.key(provider, "entry", "limits");
		this.reserveKey = Buckets.key(provider, "account", "interactive-wait");
		this.interactiveReserve = new BookingRequest.Reserve(false, this.reserveKey, settings.interactiveReserve(),
				settings.lendAfter().toNanos());
		this.batchReserve = new BookingRequest.Reserve(true, this.reserveKey, settings.interactiveReserve(),
				settings.lendAfter().toNanos());
		this.latency = new LatencyEstimate(expectedLatencyNanos);
		this.gates = new Gates(provider.account(), settings, provider.inFlightGate(), expectedLatencyNanos);
		this.queue = new AdmissionQueue(this, store, clock, settings, events, storeThread);
	}

	/**
	 * Returns the provider entry.
	 * @return the provider entry's settings
	 */
	public ProviderSpec provider() {
		return this.provider;
	}

	/**
	 * Returns the provider's penalties and exhaustion on the whole account (billing
	 * answers); the engine's own.
	 * @return the hold
	 */
	Sanctions sanctions() {
		return this.sanctions;
	}

	/**
	 * Returns the account's limits: configured, or changed at run time.
	 * @return the limits
	 */
	public Limits limits() {
		return this.limits;
	}

	/** Sets a rate or daily limit at run time. */
	synchronized void change(Dimension dimension, long limit) {
		this.limits = this.limits.with(dimension, limit);
		this.buckets = Buckets.of(this.provider, BucketSpec.Scope.ACCOUNT, "account", this.limits,
				this.provider.accountBurstWindow(), this.settings);
		this.slots = Buckets.slots(this.provider, BucketSpec.Scope.ACCOUNT, "account", this.limits, this.settings);
	}

	/**
	 * Returns the account's buckets.
	 * @return the buckets, one per limited rate or daily dimension
	 */
	public List<BucketSpec> buckets() {
		return this.buckets;
	}

	/**
	 * Returns the in-flight slots the account shares with other processes through a
	 * shared store.
	 * @return the slots, empty unless {@code concurrent-requests} is configured
	 */
	public List<BucketSpec> slots() {
		return this.slots;
	}

	/**
	 * Returns the store key under which processes sharing a store share the account's
	 * hold.
	 * @return the key
	 */
	public String sanctionsKey() {
		return this.sanctionsKey;
	}

	/**
	 * Returns the store key under which processes sharing a store share the limits an
	 * operator changed at run time.
	 * @return the key
	 */
	public String limitsKey() {
		return this.limitsKey;
	}

	/**
	 * Returns the store key where the last wait of an interactive call is kept, which
	 * decides whether batch calls may borrow the interactive reserve.
	 * @return the key
	 */
	public String reserveKey() {
		return this.reserveKey;
	}

	/** Returns the interactive reserve a call of the given class keeps or records. */
	BookingRequest.Reserve reserve(Priority priority) {
		return (priority == Priority.BATCH) ? this.batchReserve : this.interactiveReserve;
	}

	/**
	 * Returns the account's in-flight gates; read them only through a snapshot.
	 * @return the gates
	 */
	List<InFlightGate> gates() {
		return this.gates.all();
	}

	/**
	 * Sizes the account's in-flight gates again from its current limits and observed
	 * latency; called under the account queue's lock when either changes.
	 * @param settings the engine's settings
	 */
	void resizeGates(QuotaSettings settings) {
		this.gates.resize(this.limits, settings, this.latency.nanos());
	}

	LatencyEstimate latency() {
		return this.latency;
	}

	AdmissionQueue queue() {
		return this.queue;
	}

	/**
	 * Returns what a call's cost charges the account's budgets, in whole millionths: the
	 * running total of exact costs is rounded up, never each call (a thousand calls of a
	 * fifth of a millionth cost 200, not a thousand). A budget is never under-charged:
	 * what was charged beyond the exact costs, under a millionth, goes to the next call
	 * of the same day (a new day's budget owes nothing to yesterday's).
	 * @param exactMicros the call's exact cost, in millionths
	 * @param day the budget's day now, in its zone
	 * @return the millionths to charge
	 */
	synchronized long chargeMicros(double exactMicros, LocalDate day) {
		if (!day.equals(this.creditDay)) {
			this.costCredit = 0;
			this.creditDay = day;
		}
		double owed = exactMicros - this.costCredit;
		long charged = Math.max(0, (long) Math.ceil(owed - 1e-9));
		this.costCredit = charged - owed;
		return charged;
	}

}
