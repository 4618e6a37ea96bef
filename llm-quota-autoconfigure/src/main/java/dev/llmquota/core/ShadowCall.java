package dev.llmquota.core;

import dev.llmquota.QuotaEngineClosedException;
import reactor.core.Disposable;

/**
 * A call in shadow mode: it goes to the provider at once, while a virtual twin waits for
 * admission exactly as the call would have in enforce mode. When the twin is admitted,
 * the wait it needed is reported; it then holds its slots as long as the real call took
 * and is corrected by the real call's usage, so the books and every later twin see what
 * enforce mode would have seen. A twin that fails is reported as a refusal enforce mode
 * would have made.
 */
final class ShadowCall {

	private final Pool pool;

	private final QuotaClock clock;

	private final QuotaEvents events;

	private final long start;

	private QuotaPermit twin;

	private boolean ended;

	private long endedAt;

	private boolean completed;

	private Usage usage;

	/** Whether the usage is llm-quota's estimate, not the provider's report. */
	private boolean estimated;

	private Boolean refusedKeepingRequests;

	/** The twin's wait, while it waits. */
	private Disposable waiting;

	/** The real call was never sent: its twin gives back what it booked. */
	private boolean cancelled;

	ShadowCall(Pool pool, QuotaClock clock, QuotaEvents events) {
		this.pool = pool;
		this.clock = clock;
		this.events = events;
		this.start = clock.nanoTime();
	}

	long start() {
		return this.start;
	}

	/** The twin waits for admission: what a cancel of the real call disposes of. */
	void waiting(Disposable wait) {
		boolean dispose;
		synchronized (this) {
			this.waiting = wait;
			dispose = this.cancelled && this.twin == null;
		}
		if (dispose) {
			wait.dispose();
		}
	}

	/** The twin was admitted: this is how long enforce mode would have held the call. */
	void admitted(QuotaPermit permit) {
		boolean finish;
		boolean cancel;
		synchronized (this) {
			this.twin = permit;
			finish = this.ended;
			cancel = this.cancelled;
		}
		if (cancel) {
			// the real call was never sent: enforce mode would not have held it
			permit.cancel();
			return;
		}
		this.pool.stats().shadowed(permit.waitedNanos());
		this.events.shadowed(this.pool, permit.waitedNanos());
		if (finish) {
			finish();
		}
	}

	/** The twin failed: enforce mode would have refused the call. */
	void failed(Throwable error) {
		if (error instanceof QuotaEngineClosedException) {
			return;
		}
		this.pool.stats().shadowRefused();
		this.events.shadowRefused(this.pool, error);
	}

	synchronized void reconcile(Usage usage, boolean estimated) {
		this.usage = usage;
		this.estimated = estimated;
	}

	synchronized void refuse(boolean keepRequests) {
		this.refusedKeepingRequests = keepRequests;
	}

	void complete(Usage usage) {
		end(true, usage);
	}

	void release() {
		end(false, null);
	}

	/**
	 * The real call was never sent (admitted as its caller gave up): as enforce mode
	 * gives such a call's booking back whole, the twin gives back its own, or stops
	 * waiting.
	 */
	void cancel() {
		QuotaPermit admitted;
		Disposable wait;
		synchronized (this) {
			if (this.ended) {
				return;
			}
			this.ended = true;
			this.cancelled = true;
			admitted = this.twin;
			wait = this.waiting;
		}
		if (admitted != null) {
			admitted.cancel();
		}
		else if (wait != null) {
			wait.dispose();
		}
	}

	private void end(boolean completed, Usage usage) {
		boolean finish;
		synchronized (this) {
			if (this.ended) {
				return;
			}
			this.ended = true;
			this.endedAt = this.clock.nanoTime();
			this.completed = completed;
			if (usage != null) {
				this.usage = usage;
				this.estimated = false;
			}
			finish = this.twin != null;
		}
		if (finish) {
			finish();
		}
	}

	/**
	 * Ends the twin as long after its admission as the real call took, with the real
	 * call's outcome.
	 */
	private void finish() {
		QuotaPermit permit;
		long at;
		synchronized (this) {
			permit = this.twin;
			at = permit.admittedAt() + (this.endedAt - this.start);
		}
		long delay = at - this.clock.nanoTime();
		if (delay <= 0) {
			endTwin(permit);
		}
		else {
			this.clock.schedule(delay, () -> endTwin(permit));
		}
	}

	private void endTwin(QuotaPermit permit) {
		Usage usage;
		boolean estimated;
		Boolean refused;
		boolean completed;
		synchronized (this) {
			usage = this.usage;
			estimated = this.estimated;
			refused = this.refusedKeepingRequests;
			completed = this.completed;
		}
		if (refused != null) {
			permit.refuse(refused);
		}
		if (usage != null && estimated) {
			permit.reconcileEstimated(usage);
		}
		else if (usage != null) {
			permit.reconcile(usage);
		}
		if (completed) {
			permit.complete(null);
		}
		else {
			permit.release();
		}
	}

}
