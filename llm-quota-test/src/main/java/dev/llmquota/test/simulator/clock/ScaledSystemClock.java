package dev.llmquota.test.simulator.clock;

import java.time.Duration;
import java.time.Instant;

import reactor.core.publisher.Mono;

/**
 * The JVM's clock, optionally running faster than real time.
 */
final class ScaledSystemClock implements SimClock {

	private final double scale;

	private final long originNanos = System.nanoTime();

	private final Instant originInstant = Instant.now();

	ScaledSystemClock(double scale) {
		if (!(scale > 0) || Double.isInfinite(scale)) {
			throw new IllegalArgumentException("time scale must be a positive number, was " + scale);
		}
		this.scale = scale;
	}

	@Override
	public long nanoTime() {
		return (long) ((System.nanoTime() - this.originNanos) * this.scale);
	}

	@Override
	public Instant instant() {
		return this.originInstant.plusNanos(nanoTime());
	}

	@Override
	public Mono<Void> awaitNanos(long deadlineNanos) {
		long remaining = deadlineNanos - nanoTime();
		if (remaining <= 0) {
			return Mono.empty();
		}
		return Mono.delay(Duration.ofNanos((long) Math.ceil(remaining / this.scale))).then();
	}

}
