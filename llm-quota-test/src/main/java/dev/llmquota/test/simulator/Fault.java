package dev.llmquota.test.simulator;

/**
 * A failure the simulator can inject into a call.
 */
public enum Fault {

	/** A 500 in the dialect's error format. */
	SERVER_ERROR,

	/** An overload answer: 529 for Anthropic, 503 elsewhere. */
	OVERLOADED,

	/** The connection is closed halfway through a stream (or before a JSON body). */
	DROP_MID_STREAM,

	/** Headers are sent only after the configured delay. */
	DELAY_HEADERS,

	/** Rate-limit headers carry values no parser can read. */
	GARBAGE_HEADERS,

	/**
	 * A rate-limit refusal on requests per minute, whatever the books hold, asking for a
	 * wait of {@link FaultPlan#rateLimitWait()}: a provider that refuses the call without
	 * metering it.
	 */
	RATE_LIMITED

}
