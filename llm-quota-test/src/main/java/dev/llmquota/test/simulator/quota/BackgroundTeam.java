package dev.llmquota.test.simulator.quota;

/**
 * Another team spending from the same account at a steady rate, charged lazily from the
 * clock so it is deterministic under a manual clock.
 */
final class BackgroundTeam {

	private static final double NANOS_PER_MINUTE = 60e9;

	private final String model;

	private final long requestsPerMinute;

	private final long tokensPerMinute;

	private long lastNanos;

	private double requests;

	private double tokens;

	BackgroundTeam(String model, long requestsPerMinute, long tokensPerMinute, long nowNanos) {
		this.model = model;
		this.requestsPerMinute = requestsPerMinute;
		this.tokensPerMinute = tokensPerMinute;
		this.lastNanos = nowNanos;
	}

	String model() {
		return this.model;
	}

	/**
	 * Accrues the team's spending since the last call and returns whole units due now.
	 */
	long[] accrue(long nowNanos) {
		long elapsed = Math.max(0, nowNanos - this.lastNanos);
		this.lastNanos = Math.max(this.lastNanos, nowNanos);
		this.requests += elapsed * this.requestsPerMinute / NANOS_PER_MINUTE;
		this.tokens += elapsed * this.tokensPerMinute / NANOS_PER_MINUTE;
		long wholeRequests = (long) this.requests;
		long wholeTokens = (long) this.tokens;
		this.requests -= wholeRequests;
		this.tokens -= wholeTokens;
		return new long[] { wholeRequests, wholeTokens };
	}

	void restart(long nowNanos) {
		this.lastNanos = nowNanos;
		this.requests = 0;
		this.tokens = 0;
	}

}
