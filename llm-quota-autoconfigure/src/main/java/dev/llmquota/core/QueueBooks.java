package dev.llmquota.core;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import dev.llmquota.BudgetExhaustedException;
import dev.llmquota.QuotaEngineClosedException;
import dev.llmquota.QuotaExhaustedException;
import dev.llmquota.QuotaWaitTimeoutException;
import dev.llmquota.core.kernel.Admission;
import dev.llmquota.core.kernel.SharedBooks;

/**
 * One account's books and calls as the {@link Admission admission rules} see them, and
 * their effects applied: what both drains answer alike (penalties and spent quotas heard
 * here, what holds a call, the refusal told to its caller). The drains add where a call
 * is booked. Used under the queue's lock, one run at a time: a run sets the wall time and
 * the list of signals to emit after the lock.
 */
abstract class QueueBooks implements SharedBooks<Waiter> {

	final AdmissionQueue queue;

	private final Account account;

	private final QuotaSettings settings;

	private final BucketStore books;

	/** The monotonic time of the current run. */
	long now;

	/** The wall time of the current run. */
	Instant wallNow;

	/** The signals of the current run, emitted after the lock. */
	List<Runnable> after;

	QueueBooks(AdmissionQueue queue, Account account, QuotaSettings settings, BucketStore books) {
		this.queue = queue;
		this.account = account;
		this.settings = settings;
		this.books = books;
	}

	/**
	 * The headroom of a call the rules estimated, its binding named for people: the
	 * bucket wait's by {@code bucketBinding}, asked only when the buckets bind.
	 */
	final Headroom headroom(Waiter probe, long now, Instant wallNow, long bucketWait,
			java.util.function.Supplier<String> bucketBinding) {
		runs(now, wallNow, new java.util.ArrayList<>(0));
		// a full bound frees a slot about every latency / capacity
		int blocking = Admission.blockingGate(probe);
		long gateWait = (blocking < 0) ? 0 : probe.pool.latencyNanos() / Math.max(1, probe.gate(blocking).capacity());
		Admission.Estimate estimate = Admission.earliest(probe, this, now, bucketWait, gateWait);
		long wait = (estimate.at() == Admission.NEVER) ? Headroom.NEVER : estimate.at() - now;
		String binding = switch (estimate.cause()) {
			case NOTHING -> null;
			case EXHAUSTED -> "quota spent";
			case PENALTY -> "provider penalty";
			case DAY -> "daily limit";
			case BUCKETS -> bucketBinding.get();
			case GATE -> "in-flight bound";
		};
		return new Headroom(wait, null, binding);
	}

	/** Starts a run of the rules, under the lock. */
	final void runs(long now, Instant wallNow, List<Runnable> after) {
		this.now = now;
		this.wallNow = wallNow;
		this.after = after;
	}

	@Override
	public boolean waiting(Waiter waiter) {
		return waiter.state() == Waiter.State.WAITING;
	}

	@Override
	public void look(Waiter waiter) {
		waiter.refreshCharges();
	}

	/**
	 * Whether the pool or account is exhausted for the call; one probe now and then goes
	 * through where the provider gave no reset, taken only if the call is admitted.
	 */
	@Override
	public boolean exhausted(Waiter waiter, long now) {
		waiter.probing(null, 0);
		return exhausted(this.account.sanctions(), waiter, now) || exhausted(waiter.pool.sanctions(), waiter, now);
	}

	private boolean exhausted(Sanctions sanctions, Waiter waiter, long now) {
		if (sanctions.exhaustion(now) == null) {
			return false;
		}
		if (!sanctions.probeDue(now)) {
			return true;
		}
		waiter.probing(sanctions, this.settings.exhaustedProbeInterval().toNanos());
		return false;
	}

	@Override
	public long penaltyEnd(Waiter waiter, long now) {
		return Math.max(waiter.pool.sanctions().penaltyEnd(now), this.account.sanctions().penaltyEnd(now));
	}

	@Override
	public void hold(Waiter waiter, Admission.Hold hold, int gate, Waiter head) {
		switch (hold) {
			case PENALTY -> {
				Dimension dimension = waiter.pool.sanctions().penalized(this.now);
				boolean pool = dimension != null || waiter.pool.sanctions().penaltyEnd(this.now) > this.now;
				// null where the provider's refusal named no dimension
				waiter.blockedBy((dimension != null) ? dimension : this.account.sanctions().penalized(this.now),
						pool ? BucketSpec.Scope.POOL : BucketSpec.Scope.ACCOUNT, false);
			}
			case GATE -> {
				InFlightGate bound = waiter.gateUses.get(gate).gate();
				waiter.blockedBy(bound.dimension(), waiter.scopeOf(bound), true);
			}
			case HEAD -> waiter.blockedLike(head);
		}
	}

	@Override
	public void readyAt(Waiter waiter, long at) {
		waiter.readyAt(at);
	}

	@Override
	public void wakeAt(long at, long now) {
		this.queue.wakeAt(at, now);
	}

	@Override
	public void fail(Waiter waiter, Admission.Failure failure, long now) {
		waiter.fail(switch (failure) {
			case TIMED_OUT -> timeoutException(waiter, now);
			case EXHAUSTED -> exhaustedException(waiter);
			case SPENT_FOR_THE_DAY -> spentException(waiter, now);
		}, this.after);
	}

	/** Names the daily limit that refuses the call longest. */
	private RuntimeException spentException(Waiter waiter, long now) {
		long wait = -1;
		BucketSpec spent = null;
		for (Charge charge : waiter.charges) {
			long until = charge.bucket().daily() ? dayWait(charge, now, this.wallNow) : -1;
			if (until > wait) {
				wait = until;
				spent = charge.bucket();
			}
		}
		return budgetException(waiter, spent, this.wallNow, Math.max(0, wait));
	}

	/**
	 * How long one daily charge makes its call wait, as the books stand; asks the store,
	 * so a shared one only from the store thread.
	 */
	final long dayWait(Charge charge, long now, Instant wallNow) {
		return this.books.nanosUntilAvailable(List.of(charge), now, wallNow);
	}

	@Override
	public long dayWait(Waiter waiter, long now) {
		return 0;
	}

	@Override
	public long wait(Waiter waiter, long now) {
		throw new IllegalStateException("Only a store of this process books a call under the queue's lock");
	}

	@Override
	public Admission.Refusal book(Waiter waiter, long now) {
		throw new IllegalStateException("Only a store of this process books a call under the queue's lock");
	}

	@Override
	public void giveBack(Waiter waiter, long now) {
		throw new IllegalStateException("Only a store of this process books a call under the queue's lock");
	}

	@Override
	public void admit(Waiter waiter, long now) {
		throw new IllegalStateException("Only a store of this process books a call under the queue's lock");
	}

	@Override
	public boolean asked(Waiter waiter) {
		return true;
	}

	@Override
	public boolean sharesBucket(Waiter waiter, Waiter other) {
		for (Charge charge : waiter.charges) {
			for (Charge others : other.charges) {
				if (charge.bucket().equals(others.bucket())) {
					return true;
				}
			}
		}
		return false;
	}

	@Override
	public boolean needsDayCheck(Waiter waiter) {
		return false;
	}

	@Override
	public void bookShared(Waiter waiter) {
		throw new IllegalStateException("A store of this process books under the queue's lock");
	}

	@Override
	public void checkDay(Waiter waiter) {
		throw new IllegalStateException("A store of this process books under the queue's lock");
	}

	private QuotaExhaustedException exhaustedException(Waiter waiter) {
		for (Sanctions sanctions : List.of(this.account.sanctions(), waiter.pool.sanctions())) {
			Sanctions.Exhaustion exhaustion = sanctions.exhaustion(this.now);
			if (exhaustion != null) {
				return exhaustedException(waiter, exhaustion.dimension(), exhaustion.reason(),
						exhaustion.comesBack(this.now, this.wallNow));
			}
		}
		return exhaustedException(waiter, null, null, null);
	}

	static QuotaWaitTimeoutException timeoutException(Waiter waiter, long now) {
		// none where a 429 that named no dimension held it
		String dimension = (waiter.blockedOn() != null) ? waiter.blockedOn().id() : "unknown";
		// when its buckets (or a penalty) would admit it, as last computed; unknown while
		// an in-flight bound or the head of the queue held it
		long availableAt = waiter.availableAt();
		Duration retryAfter = (availableAt > now) ? Duration.ofNanos(availableAt - now) : null;
		return new QuotaWaitTimeoutException(waiter.pool.provider(), waiter.pool.region(), waiter.pool.model(),
				dimension, waiter.blocker(), Duration.ofNanos(now - waiter.enqueuedAt), retryAfter);
	}

	static BudgetExhaustedException budgetException(Waiter waiter, BucketSpec bucket, Instant wallNow, long waitNanos) {
		return new BudgetExhaustedException(waiter.pool.provider(), waiter.pool.region(), waiter.pool.model(),
				bucket.dimension().id(), bucket.scope().id(), wallNow.plus(Duration.ofNanos(waitNanos)));
	}

	static BudgetExhaustedException beyondBudgetException(Waiter waiter, Charge charge) {
		BucketSpec bucket = charge.bucket();
		return BudgetExhaustedException.beyondBudget(waiter.pool.provider(), waiter.pool.region(), waiter.pool.model(),
				bucket.dimension().id(), bucket.scope().id(), charge.units(), bucket.enforced());
	}

	static QuotaExhaustedException exhaustedException(Waiter waiter, Dimension dimension, String reason,
			Instant until) {
		return new QuotaExhaustedException(waiter.pool.provider(), waiter.pool.region(), waiter.pool.model(),
				(dimension != null) ? dimension.id() : null, reason, until);
	}

	static QuotaEngineClosedException closedException(Waiter waiter) {
		return new QuotaEngineClosedException(waiter.pool.provider(), waiter.pool.region(), waiter.pool.model());
	}

}
