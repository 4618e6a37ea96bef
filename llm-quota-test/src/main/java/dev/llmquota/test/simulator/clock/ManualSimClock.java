package dev.llmquota.test.simulator.clock;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * A clock that moves only when a test calls {@link #advance(Duration)}; waits on it
 * (latency, stream pacing) complete when the clock passes their deadline.
 */
public final class ManualSimClock implements SimClock {

	private final List<Waiter> waiters = new ArrayList<>();

	private final Instant origin;

	private long nanos;

	/**
	 * A manual clock starting at the given wall instant.
	 * @param origin the wall time at monotonic zero
	 */
	public ManualSimClock(Instant origin) {
		this.origin = origin;
	}

	/**
	 * A manual clock starting at 2026-01-01T00:00:00Z.
	 */
	public ManualSimClock() {
		this(Instant.parse("2026-01-01T00:00:00Z"));
	}

	@Override
	public synchronized long nanoTime() {
		return this.nanos;
	}

	@Override
	public synchronized Instant instant() {
		return this.origin.plusNanos(this.nanos);
	}

	@Override
	public Mono<Void> awaitNanos(long deadlineNanos) {
		return Mono.defer(() -> {
			synchronized (this) {
				if (deadlineNanos <= this.nanos) {
					return Mono.empty();
				}
				Waiter waiter = new Waiter(deadlineNanos, Sinks.empty());
				this.waiters.add(waiter);
				// a cancelled wait (a client gone mid-stream) must not count as pending
				return waiter.sink.asMono().doOnCancel(() -> forget(waiter));
			}
		});
	}

	private synchronized void forget(Waiter waiter) {
		this.waiters.remove(waiter);
	}

	/**
	 * Moves time forward and releases every wait whose deadline has passed.
	 * @param duration how far to move, not negative
	 */
	public void advance(Duration duration) {
		if (duration.isNegative()) {
			throw new IllegalArgumentException("time cannot go backwards");
		}
		List<Waiter> due = new ArrayList<>();
		synchronized (this) {
			this.nanos += duration.toNanos();
			this.waiters.removeIf((waiter) -> {
				if (waiter.deadline <= this.nanos) {
					due.add(waiter);
					return true;
				}
				return false;
			});
		}
		due.forEach((waiter) -> waiter.sink.tryEmitEmpty());
	}

	/**
	 * The number of waits not yet released, useful to await a stream reaching a pause.
	 * @return pending waits
	 */
	public synchronized int pendingWaits() {
		return this.waiters.size();
	}

	private record Waiter(long deadline, Sinks.Empty<Void> sink) {
	}

}
