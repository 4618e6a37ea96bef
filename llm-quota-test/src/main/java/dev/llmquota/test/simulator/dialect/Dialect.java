package dev.llmquota.test.simulator.dialect;

import java.time.Instant;
import java.util.Map;
import java.util.UUID;

import dev.llmquota.test.simulator.quota.Dimension;
import dev.llmquota.test.simulator.quota.DimensionState;
import dev.llmquota.test.simulator.quota.OutputPolicy;
import dev.llmquota.test.simulator.quota.Refusal;
import tools.jackson.databind.JsonNode;

/**
 * One provider's wire format: which paths it serves, how it reads requests and how it
 * writes answers, streams, rate-limit headers and errors.
 */
public interface Dialect {

	/**
	 * The dialect id as in the contract ({@code openai}, {@code azure-openai}, ...).
	 * @return the id
	 */
	String id();

	/**
	 * Matches a POST path.
	 * @param path the raw request path without query, percent-encoding intact, so a
	 * captured model id is decoded exactly once
	 * @param query the query parameters
	 * @return the route, or {@code null} when this dialect does not serve the path
	 */
	Route route(String path, Map<String, String> query);

	/**
	 * Reads a request body.
	 * @param route the matched route
	 * @param body the parsed JSON body
	 * @return the call
	 * @throws BadRequestException when the body lacks what the provider requires
	 */
	CallRequest read(Route route, JsonNode body);

	/**
	 * How this provider meters output by default.
	 * @return the policy
	 */
	OutputPolicy defaultOutputPolicy();

	/**
	 * Whether a call refused for a rate limit still counts against the per-minute request
	 * limit. Only OpenAI documents that it does ("unsuccessful requests contribute to
	 * your per-minute limit"); the other providers document nothing either way, and their
	 * refusals are free here.
	 * @return whether a refusal takes a request from the per-minute request buckets
	 */
	default boolean chargesRefusedRequests() {
		return false;
	}

	/**
	 * A fresh provider request id.
	 * @return the id
	 */
	String newRequestId();

	/**
	 * A fresh id for the answer's message, completion or response object.
	 * @param call the call answered
	 * @return the id
	 */
	default String newMessageId(CallRequest call) {
		return UUID.randomUUID().toString().replace("-", "");
	}

	/**
	 * Headers of a successful answer, rate-limit headers included.
	 * @param call the call
	 * @param requestId the request id
	 * @param states the tightest meter states after admission
	 * @param now the wall time
	 * @return headers without content type
	 */
	Map<String, String> successHeaders(CallRequest call, String requestId, Map<Dimension, DimensionState> states,
			Instant now);

	/**
	 * Headers of a non-streamed answer that depend on the finished answer (Bedrock
	 * InvokeModel's token counts); none by default.
	 * @param call the call
	 * @param completion the answer
	 * @return headers to add to the success headers
	 */
	default Map<String, String> completionHeaders(CallRequest call, Completion completion) {
		return Map.of();
	}

	/**
	 * Rate-limit headers with values a parser cannot read, for fault injection.
	 * @return header names and garbage values
	 */
	Map<String, String> garbageHeaders();

	/**
	 * The non-streamed answer body.
	 * @param call the call
	 * @param completion the answer
	 * @return JSON text
	 */
	String completionBody(CallRequest call, Completion completion);

	/**
	 * A rate-limit refusal.
	 * @param call the call
	 * @param refusal why it was refused
	 * @param states the tightest meter states
	 * @param requestId the request id
	 * @param now the wall time
	 * @return the reply
	 */
	Reply refusal(CallRequest call, Refusal refusal, Map<Dimension, DimensionState> states, String requestId,
			Instant now);

	/**
	 * The administrative exhaustion answer (billing, spend cap, per-day quota).
	 * @param call the call
	 * @param requestId the request id
	 * @param now the wall time
	 * @return the reply
	 */
	Reply exhausted(CallRequest call, String requestId, Instant now);

	/**
	 * A 400 for a request that cannot be read.
	 * @param message what is wrong
	 * @param requestId the request id
	 * @return the reply
	 */
	Reply badRequest(String message, String requestId);

	/**
	 * A provider-side failure: an internal error, or overload (Anthropic's 529).
	 * @param overloaded whether the provider is overloaded rather than broken
	 * @param requestId the request id
	 * @return the reply
	 */
	Reply serverError(boolean overloaded, String requestId);

}
