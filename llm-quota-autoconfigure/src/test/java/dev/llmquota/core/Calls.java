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

	public static Call acquire(QuotaEngine engine, Pool pool, Demand demand) {
		return acquire(engine, pool, demand, null, null);
	}

	public static Call acquire(QuotaEngine engine, Pool pool, Demand demand, Priority priority, Duration maxWait) {
		Call call = new Call(engine.clock());
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

		Call(QuotaClock clock) {
			this.submittedAt = clock.nanoTime();
		}

		public boolean admitted() {
			return this.permit.get() != null;
		}

		public QuotaPermit permit() {
			return this.permit.get();
		}

		public Throwable error() {
			return this.error.get();
		}

		public Duration waited() {
			return Duration.ofNanos(this.admittedAt - this.submittedAt);
		}

		public void cancel() {
			this.subscription.dispose();
		}

	}

}
