package dev.llmquota.core;

import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * Corrects an admitted call's charges once it ends: to its usage, to its ceiling when
 * nothing was reported, or back to nothing when the provider refused it. Every correction
 * goes to the books that charged the booking; a refund runs the queue.
 */
final class Corrections {

	private final AdmissionQueue queue;

	private final BucketStore store;

	private final QuotaClock clock;

	private final QuotaEvents events;

	/** The thread that talks to a shared store, or {@code null} for a local store. */
	private final Executor storeThread;

	Corrections(AdmissionQueue queue, BucketStore store, QuotaClock clock, QuotaEvents events, Executor storeThread) {
		this.queue = queue;
		this.store = store;
		this.clock = clock;
		this.events = events;
		this.storeThread = storeThread;
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
		if (accounting.cost() != null) {
			// its budget keeps what it reserved
			this.events.spent(permit.pool(), accounting.cost().microsAtAdmission(permit.demand()));
		}
		lookAtBudgets(permit);
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

	/**
	 * Corrects a call's charges to its usage; usage llm-quota {@code estimated} leaves a
	 * money budget's charge as reserved.
	 */
	void reconcile(QuotaPermit permit, Usage usage, boolean estimated) {
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
		if (accounting.cost() != null) {
			// what the budgets are charged below: the reservation stands for an estimate
			this.events.spent(permit.pool(),
					estimated ? accounting.cost().microsAtAdmission(demand) : accounting.cost().exactMicros(usage));
		}
		long now = this.clock.nanoTime();
		Instant wallNow = this.clock.instant();
		List<Charge> corrections = new ArrayList<>(permit.charges().size());
		boolean refunded = false;
		long cost = -1;
		for (Charge charge : permit.charges()) {
			Dimension dimension = charge.bucket().dimension();
			long delta = (dimension.countsInput() ? inputDelta : 0) + (dimension.countsOutput() ? outputDelta : 0);
			if (dimension.countsMoney() && estimated) {
				// what went by does not show all that is billed: the reservation stands
				continue;
			}
			if (dimension.countsMoney()) {
				// a budget is charged what the call cost, whatever it reserved; its day's
				// and its month's alike
				if (cost < 0) {
					cost = (accounting.cost() != null) ? permit.pool()
						.account()
						.chargeMicros(accounting.cost().exactMicros(usage),
								LocalDate.ofInstant(wallNow, charge.bucket().zone()))
							: 0;
				}
				delta = cost - charge.units();
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
			this.queue.wake();
		}
		lookAtBudgets(permit);
	}

	/** A call's end may take its budgets past warn-at: they are looked at. */
	private void lookAtBudgets(QuotaPermit permit) {
		List<BucketSpec> budgets = null;
		for (Charge charge : permit.charges()) {
			if (charge.bucket().dimension().countsMoney()) {
				budgets = (budgets != null) ? budgets : new ArrayList<>(2);
				budgets.add(charge.bucket());
			}
		}
		if (budgets != null) {
			warnOfBudgetsLater(permit.pool().account(), budgets);
		}
	}

	void refuse(QuotaPermit permit, boolean keepRequests) {
		long now = this.clock.nanoTime();
		Instant wallNow = this.clock.instant();
		List<Charge> refunds = new ArrayList<>();
		for (Charge charge : permit.charges()) {
			// a refused call costs no tokens nor money; where the provider counts refused
			// requests (OpenAI: "unsuccessful requests contribute to your per-minute
			// limit"), its per-minute request stays charged, never its day
			Dimension dimension = charge.bucket().dimension();
			boolean give = dimension.countsTokens() || dimension.countsMoney() || !keepRequests
					|| dimension.kind() != Dimension.Kind.RATE;
			if (give && charge.units() > 0 && permit.refundable(charge.bucket(), wallNow)) {
				refunds.add(new Charge(charge.bucket(), -charge.units()));
			}
		}
		if (!refunds.isEmpty()) {
			this.store.correct(permit.booking(), refunds, now, wallNow);
		}
		this.queue.wake();
	}

	/**
	 * Warns of budgets spent; a shared store is read from its own thread, never a
	 * caller's.
	 */
	private void warnOfBudgetsLater(Account account, List<BucketSpec> budgets) {
		Runnable check = () -> warnOfBudgets(account, budgets);
		if (this.storeThread == null) {
			check.run();
		}
		else if (!this.queue.closed()) {
			try {
				this.storeThread.execute(check);
			}
			catch (RejectedExecutionException ex) {
				// closing: no warning needed
			}
		}
	}

	/** Tells the observers of budgets spent beyond the entry's warning share. */
	private void warnOfBudgets(Account account, List<BucketSpec> budgets) {
		long now = this.clock.nanoTime();
		Instant wallNow = this.clock.instant();
		double warnAt = account.provider().budgetWarnAt();
		for (BucketSpec budget : budgets) {
			BucketState state = this.store.state(budget, now, wallNow);
			long spent = budget.enforced() - state.remaining();
			if (spent >= warnAt * budget.enforced()) {
				this.events.budgetWarning(account, budget.dimension(), spent, budget.enforced(),
						wallNow.plusNanos(state.nanosUntilFull()));
			}
		}
	}

}
