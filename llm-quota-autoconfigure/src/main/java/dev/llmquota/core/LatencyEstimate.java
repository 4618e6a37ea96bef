package dev.llmquota.core;

/**
 * Whole-call latency (request sent to last byte), seeded with the expected latency until
 * the first call completes, then an exponentially weighted average of what is observed.
 */
final class LatencyEstimate {

	private volatile long nanos;

	private volatile boolean observed;

	LatencyEstimate(long expectedNanos) {
		this.nanos = expectedNanos;
	}

	long nanos() {
		return this.nanos;
	}

	boolean observed() {
		return this.observed;
	}

	/** Called under the account's admission lock. */
	void record(long sampleNanos) {
		long sample = Math.max(1, sampleNanos);
		if (!this.observed) {
			this.observed = true;
			this.nanos = sample;
		}
		else {
			this.nanos = this.nanos + (sample - this.nanos) / 5;
		}
	}

}
