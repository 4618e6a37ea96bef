package dev.llmquota.test.simulator.clock;

import java.time.Duration;
import java.time.Instant;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import reactor.core.publisher.Mono;

/**
 * Time as the simulator sees it: all quota arithmetic and all pacing read this clock.
 */
public interface SimClock {

	/**
	 * Monotonic time in nanoseconds; only differences are meaningful.
	 * @return the current monotonic time
	 */
	long nanoTime();

	/**
	 * Wall-clock time, used for reset timestamps and calendar days.
	 * @return the current instant
	 */
	Instant instant();

	/**
	 * A signal that completes once {@link #nanoTime()} has reached the deadline.
	 * @param deadlineNanos the monotonic time to wait for
	 * @return a Mono completing at the deadline
	 */
	default Mono<Void> awaitNanos(long deadlineNanos) {
		long remaining = deadlineNanos - nanoTime();
		return (remaining <= 0) ? Mono.empty() : Mono.delay(Duration.ofNanos(remaining)).then();
	}

	/**
	 * The real clock of this JVM.
	 * @return the system clock
	 */
	static SimClock system() {
		return new ScaledSystemClock(1.0);
	}

	/**
	 * A system clock that runs {@code scale} times faster than real time, so a minute of
	 * quota refills in {@code 60 / scale} seconds.
	 * @param scale the speed-up factor, greater than zero
	 * @return a scaled clock
	 */
	static SimClock scaled(double scale) {
		return new ScaledSystemClock(scale);
	}

	/**
	 * Adapts another clock (for example the client engine's test clock) so simulator and
	 * client share one time line. Waits on such a clock use real time for the remaining
	 * difference, so use it with zero latency or advance it promptly.
	 * @param nanos monotonic nanoseconds
	 * @param wall wall instant
	 * @return an adapter
	 */
	static SimClock of(LongSupplier nanos, Supplier<Instant> wall) {
		return new SimClock() {

			@Override
			public long nanoTime() {
				return nanos.getAsLong();
			}

			@Override
			public Instant instant() {
				return wall.get();
			}

		};
	}

}
