package dev.llmquota.core;

import java.time.Instant;
import java.util.concurrent.TimeUnit;

import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The engine's only source of time and timers: monotonic nanoseconds for rate buckets,
 * wall time for calendar days, and delayed tasks for waking waiters. Tests inject a clock
 * they advance by hand, so minutes of traffic run in milliseconds.
 */
public interface QuotaClock {

	/**
	 * Returns monotonic time in nanoseconds; only differences are meaningful.
	 * @return the current monotonic time
	 */
	long nanoTime();

	/**
	 * Returns the wall time.
	 * @return the current instant
	 */
	Instant instant();

	/**
	 * Runs a task after a delay.
	 * @param delayNanos the delay in nanoseconds
	 * @param task the task
	 * @return a handle that cancels the task
	 */
	Disposable schedule(long delayNanos, Runnable task);

	/**
	 * Returns the system clock, whose timers run on Reactor's parallel scheduler.
	 * @return the system clock
	 */
	static QuotaClock system() {
		return SystemClock.INSTANCE;
	}

	/**
	 * The system clock.
	 */
	final class SystemClock implements QuotaClock {

		static final SystemClock INSTANCE = new SystemClock(Schedulers.parallel());

		private final Scheduler scheduler;

		private SystemClock(Scheduler scheduler) {
			this.scheduler = scheduler;
		}

		@Override
		public long nanoTime() {
			return System.nanoTime();
		}

		@Override
		public Instant instant() {
			return Instant.now();
		}

		@Override
		public Disposable schedule(long delayNanos, Runnable task) {
			return this.scheduler.schedule(task, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
		}

	}

}
