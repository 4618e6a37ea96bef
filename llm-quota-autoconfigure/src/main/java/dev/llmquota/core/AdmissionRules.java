package dev.llmquota.core;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import dev.llmquota.BudgetExhaustedException;
import dev.llmquota.QuotaEngineClosedException;
import dev.llmquota.QuotaExhaustedException;
import dev.llmquota.QuotaWaitTimeoutException;

/**
 * The rules of admission both drains apply alike, whichever store books: the provider's
 * penalties and exhaustion hold a call, a later call never takes the gate room the head
 * of the queue needs, and how each refusal is told to the caller.
 */
final class AdmissionRules {

	private final Account account;

	private final QuotaSettings settings;

	AdmissionRules(Account account, QuotaSettings settings) {
		this.account = account;
		this.settings = settings;
	}

	/**
	 * Fails a call fast while its pool or account is exhausted, but lets one probe
	 * through now and then where the provider gave no reset.
	 * @return whether the call failed
	 */
	boolean exhausted(Waiter waiter, long now, Instant wallNow, List<Runnable> after) {
		waiter.probing(null, 0);
		for (Sanctions sanctions : List.of(this.account.sanctions(), waiter.pool.sanctions())) {
			Sanctions.Exhaustion exhaustion = sanctions.exhaustion(wallNow);
			if (exhaustion != null && sanctions.probeDue(now)) {
				// the probe is taken only if this call is admitted now
				waiter.probing(sanctions, this.settings.exhaustedProbeInterval().toNanos());
			}
			else if (exhaustion != null) {
				waiter.fail(exhaustedException(waiter, exhaustion.dimension(), exhaustion.reason(), exhaustion.until()),
						after);
				return true;
			}
		}
		return false;
	}

	/**
	 * Whether a provider penalty or a spent quota heard here holds the waiter now;
	 * changes nothing.
	 */
	boolean sanctioned(Waiter waiter, long now, Instant wallNow) {
		Sanctions pool = waiter.pool.sanctions();
		Sanctions account = this.account.sanctions();
		return pool.exhaustion(wallNow) != null || account.exhaustion(wallNow) != null || pool.penaltyEnd(now) > now
				|| account.penaltyEnd(now) > now;
	}

	/**
	 * Whether a provider penalty heard here holds the waiter now; sets what blocks it and
	 * when it may go.
	 */
	boolean penalized(Waiter waiter, long now) {
		long penalty = Math.max(waiter.pool.sanctions().penaltyEnd(now), this.account.sanctions().penaltyEnd(now));
		if (penalty <= now) {
			return false;
		}
		Dimension dimension = waiter.pool.sanctions().penalized(now);
		waiter.blockedBy((dimension != null) ? dimension : this.account.sanctions().penalized(now),
				(dimension != null) ? BucketSpec.Scope.POOL : BucketSpec.Scope.ACCOUNT, false);
		waiter.readyAt(penalty);
		return true;
	}

	/** Whether the waiter would take gate room the head needs. */
	static boolean takesGateRoomOf(Waiter head, Waiter waiter) {
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

	/**
	 * Whether a daily limit refusing the call for {@code waitNanos} outlasts its
	 * deadline: then it fails now rather than at its deadline.
	 */
	static boolean outlastsDeadline(Waiter waiter, BucketSpec bucket, long waitNanos, long now) {
		return bucket.daily() && waitNanos > waiter.deadline - now;
	}

	static QuotaWaitTimeoutException timeoutException(Waiter waiter, long now) {
		Dimension dimension = (waiter.blockedOn() != null) ? waiter.blockedOn() : Dimension.REQUESTS_PER_MINUTE;
		// when its buckets (or a penalty) would admit it, as last computed; unknown while
		// an in-flight bound or the head of the queue held it
		long availableAt = waiter.availableAt();
		Duration retryAfter = (availableAt > now) ? Duration.ofNanos(availableAt - now) : null;
		return new QuotaWaitTimeoutException(waiter.pool.provider(), waiter.pool.region(), waiter.pool.model(),
				dimension.id(), waiter.blocker(), Duration.ofNanos(now - waiter.enqueuedAt), retryAfter);
	}

	static BudgetExhaustedException budgetException(Waiter waiter, BucketSpec bucket, Instant wallNow, long waitNanos) {
		return new BudgetExhaustedException(waiter.pool.provider(), waiter.pool.region(), waiter.pool.model(),
				bucket.dimension().id(), bucket.scope().id(), wallNow.plus(Duration.ofNanos(waitNanos)));
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
