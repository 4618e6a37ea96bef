package dev.llmquota.core;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * The engine's observers: tells every one of them each event, and a failing observer
 * never breaks a call. An observer removed is told nothing more.
 */
final class Listeners implements QuotaEvents {

	/**
	 * The observers as an array, replaced whole on a change: telling them allocates
	 * nothing.
	 */
	private volatile QuotaEvents[] listeners = new QuotaEvents[0];

	synchronized void add(QuotaEvents listener) {
		QuotaEvents[] more = Arrays.copyOf(this.listeners, this.listeners.length + 1);
		more[more.length - 1] = listener;
		this.listeners = more;
	}

	synchronized void remove(QuotaEvents listener) {
		List<QuotaEvents> fewer = new ArrayList<>(Arrays.asList(this.listeners));
		if (fewer.remove(listener)) {
			this.listeners = fewer.toArray(new QuotaEvents[0]);
		}
	}

	private void each(Consumer<QuotaEvents> event) {
		for (QuotaEvents listener : this.listeners) {
			try {
				event.accept(listener);
			}
			catch (RuntimeException ex) {
				// Observers are for metrics; their failure must not fail a provider
				// call.
			}
		}
	}

	@Override
	public void poolCreated(Pool pool) {
		each((listener) -> listener.poolCreated(pool));
	}

	@Override
	public void poolEvicted(Pool pool) {
		each((listener) -> listener.poolEvicted(pool));
	}

	@Override
	public void spent(Pool pool, double micros) {
		each((listener) -> listener.spent(pool, micros));
	}

	@Override
	public void accountLimitsChanged(Account account) {
		each((listener) -> listener.accountLimitsChanged(account));
	}

	@Override
	public void admitted(Pool pool, Priority priority, long waitedNanos) {
		each((listener) -> listener.admitted(pool, priority, waitedNanos));
	}

	@Override
	public void reconciled(Pool pool, Demand demand, Usage usage, long reservedOutput, long billedOutput) {
		each((listener) -> listener.reconciled(pool, demand, usage, reservedOutput, billedOutput));
	}

	@Override
	public void drift(Pool pool, double ratio) {
		each((listener) -> listener.drift(pool, ratio));
	}

	@Override
	public void throttled(Pool pool, Dimension dimension) {
		each((listener) -> listener.throttled(pool, dimension));
	}

	@Override
	public void shadowed(Pool pool, long wouldHaveWaitedNanos) {
		each((listener) -> listener.shadowed(pool, wouldHaveWaitedNanos));
	}

	@Override
	public void shadowRefused(Pool pool, Throwable refusal) {
		each((listener) -> listener.shadowRefused(pool, refusal));
	}

	@Override
	public void budgetWarning(Account account, Dimension dimension, long spentMicros, long limitMicros, Instant reset) {
		each((listener) -> listener.budgetWarning(account, dimension, spentMicros, limitMicros, reset));
	}

}
