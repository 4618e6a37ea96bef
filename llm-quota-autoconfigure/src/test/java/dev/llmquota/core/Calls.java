package dev.llmquota.core;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import reactor.core.Disposable;

/**
 * Subscribes to admissions and remembers their outcome, for tests that drive the engine
 * with a {@link ManualClock}.
 */
public final class Calls {

	private Calls() {
	}

	/**
	 * Waits until a shared store's bookings asked for so far have run, so a test reads
	 * the same on either store.
	 * @param engine the engine
	 */
	public static void settle(QuotaEngine engine) {
		engine.awaitQuiet();
	}

	public static Call acquire(QuotaEngine engine, Pool pool, Demand demand) {
		return acquire(engine, pool, demand, null, null);
	}

	public static Call acquire(QuotaEngine engine, Pool pool, Demand demand, Priority priority, Duration maxWait) {
		Call call = new Call(engine);
		call.subscription = engine.acquire(pool, demand, priority, maxWait).subscribe((permit) -> {
			call.admittedAt = engine.clock().nanoTime();
			call.permit.set(permit);
		}, call.error::set);
		return call;
	}

	/**
	 * One call's admission.
	 */
	public static final class Call {

		final AtomicReference<QuotaPermit> permit = new AtomicReference<>();

		final AtomicReference<Throwable> error = new AtomicReference<>();

		final long submittedAt;

		volatile long admittedAt = -1;

		Disposable subscription;

		private final QuotaEngine engine;

		Call(QuotaEngine engine) {
			this.engine = engine;
			this.submittedAt = engine.clock().nanoTime();
		}

		// On a shared store, bookings run on the store thread: each look waits for it to
		// be done with what the test did so far, so a test reads the same on either
		// store.

		public boolean admitted() {
			this.engine.awaitQuiet();
			return this.permit.get() != null;
		}

		public QuotaPermit permit() {
			this.engine.awaitQuiet();
			return this.permit.get();
		}

		public Throwable error() {
			this.engine.awaitQuiet();
			return this.error.get();
		}

		public Duration waited() {
			this.engine.awaitQuiet();
			return Duration.ofNanos(this.admittedAt - this.submittedAt);
		}

		public void cancel() {
			this.subscription.dispose();
			this.engine.awaitQuiet();
		}

	}

}
