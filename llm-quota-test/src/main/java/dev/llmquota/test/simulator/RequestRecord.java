package dev.llmquota.test.simulator;

import java.time.Instant;

import dev.llmquota.test.simulator.dialect.Operation;
import dev.llmquota.test.simulator.quota.Dimension;

/**
 * One request as the provider saw it.
 *
 * @param arrival wall time of arrival (simulator clock)
 * @param arrivalNanos monotonic time of arrival (simulator clock)
 * @param dialect the dialect id
 * @param operation the kind of call
 * @param api the provider's name of the endpoint called, for example {@code responses} or
 * {@code converse-stream}
 * @param model the model id, or {@code null} if the request could not be read
 * @param stream whether the answer was streamed
 * @param inputTokens input tokens as counted by the provider
 * @param maxTokens the output ceiling (declared or default; 0 for embeddings)
 * @param outputTokens output tokens sent (0 for embeddings)
 * @param status the HTTP status answered
 * @param outcome what happened
 * @param overLimit whether the request exceeded a limit (refused, or let through with
 * enforcement off)
 * @param dimension the dimension it exceeded, or {@code null}
 * @param fault the injected fault, or {@code null}
 */
public record RequestRecord(Instant arrival, long arrivalNanos, String dialect, Operation operation, String api,
		String model, boolean stream, long inputTokens, long maxTokens, long outputTokens, int status, Outcome outcome,
		boolean overLimit, Dimension dimension, Fault fault) {

	/**
	 * What became of a request.
	 */
	public enum Outcome {

		/** Answered in full. */
		COMPLETED,

		/** Refused by a rate limit or per-day cap. */
		REFUSED,

		/** Refused by an administrative exhaustion (billing, spend cap). */
		EXHAUSTED,

		/** The body could not be read. */
		BAD_REQUEST,

		/** An injected server error. */
		FAILED,

		/** The connection was dropped, by a fault or by the client. */
		DROPPED

	}

}
