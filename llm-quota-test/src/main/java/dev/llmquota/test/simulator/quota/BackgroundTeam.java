package dev.llmquota.test.simulator.quota;

/**
 * Another team spending from the same account at a steady rate: it slows the refill of
 * per-minute buckets, and is charged to per-day caps lazily from the clock, so both are
 * deterministic under a manual clock.
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

	long requestsPerMinute() {
		return this.requestsPerMinute;
	}

	long tokensPerMinute() {
		return this.tokensPerMinute;
	}

	/**
	 * Accrues the team's spending since the last call and returns whole units due now,
	 * for caps that do not refill.
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
