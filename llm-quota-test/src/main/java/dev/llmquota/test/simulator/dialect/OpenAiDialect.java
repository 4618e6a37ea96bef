package dev.llmquota.test.simulator.dialect;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

import dev.llmquota.test.simulator.quota.Dimension;
import dev.llmquota.test.simulator.quota.DimensionState;
import dev.llmquota.test.simulator.quota.OutputPolicy;
import dev.llmquota.test.simulator.quota.Refusal;
import tools.jackson.databind.JsonNode;

/**
 * OpenAI: {@code POST /v1/chat/completions}, {@code /v1/responses} and
 * {@code /v1/embeddings}, {@code x-ratelimit-*} headers with Go-duration resets,
 * {@code rate_limit_exceeded} (in-stream {@code response.failed} for a streamed Responses
 * call) and {@code insufficient_quota} errors.
 */
public final class OpenAiDialect extends ChatCompletionsDialect {

	static final String ORGANIZATION = "org-simulator0000000000000";

	@Override
	public String id() {
		return "openai";
	}

	@Override
	public boolean chargesRefusedRequests() {
		return true;
	}

	@Override
	public Route route(String path, Map<String, String> query) {
		return switch (path) {
			case "/v1/chat/completions" -> new Route(null, false, query, Operation.CHAT, "chat/completions");
			case "/v1/responses" -> new Route(null, false, query, Operation.RESPONSES, "responses");
			case "/v1/embeddings" -> new Route(null, false, query, Operation.EMBEDDINGS, "embeddings");
			default -> null;
		};
	}

	@Override
	public CallRequest read(Route route, JsonNode body) {
		return switch (route.operation()) {
			case CHAT -> ChatCompletionsWire.read(route, Json.requiredString(body, "model"), body, null);
			case RESPONSES -> ResponsesWire.read(route, body);
			case EMBEDDINGS -> EmbeddingsWire.read(route, Json.requiredString(body, "model"), body, null);
		};
	}

	@Override
	public OutputPolicy defaultOutputPolicy() {
		return OutputPolicy.RESERVE_AND_REFUND;
	}

	@Override
	public String newRequestId() {
		return "req_" + UUID.randomUUID().toString().replace("-", "");
	}

	private Map<String, String> baseHeaders(String requestId) {
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put("openai-organization", ORGANIZATION);
		headers.put("openai-processing-ms", "1");
		headers.put("openai-version", "2020-10-01");
		headers.put("x-request-id", requestId);
		return headers;
	}

	@Override
	public Map<String, String> successHeaders(CallRequest call, String requestId, Map<Dimension, DimensionState> states,
			Instant now) {
		Map<String, String> headers = baseHeaders(requestId);
		headers.putAll(rateLimitHeaders(states));
		return headers;
	}

	static Map<String, String> rateLimitHeaders(Map<Dimension, DimensionState> states) {
		Map<String, String> headers = new LinkedHashMap<>();
		DimensionState requests = states.get(Dimension.REQUESTS_PER_MINUTE);
		DimensionState tokens = states.get(Dimension.TOKENS_PER_MINUTE);
		if (requests != null) {
			headers.put("x-ratelimit-limit-requests", Long.toString(requests.limit()));
		}
		if (tokens != null) {
			headers.put("x-ratelimit-limit-tokens", Long.toString(tokens.limit()));
		}
		if (requests != null) {
			headers.put("x-ratelimit-remaining-requests", Long.toString(requests.remaining()));
		}
		if (tokens != null) {
			headers.put("x-ratelimit-remaining-tokens", Long.toString(tokens.remaining()));
		}
		if (requests != null) {
			headers.put("x-ratelimit-reset-requests", Formats.goDuration(requests.untilFull()));
		}
		if (tokens != null) {
			headers.put("x-ratelimit-reset-tokens", Formats.goDuration(tokens.untilFull()));
		}
		return headers;
	}

	@Override
	public Map<String, String> garbageHeaders() {
		return Map.of("x-ratelimit-remaining-tokens", "lots", "x-ratelimit-reset-tokens", "soon-ish",
				"x-ratelimit-limit-requests", "-");
	}

	@Override
	public Reply refusal(CallRequest call, Refusal refusal, Map<Dimension, DimensionState> states, String requestId,
			Instant now) {
		Map<String, String> headers = baseHeaders(requestId);
		headers.putAll(rateLimitHeaders(states));
		String type = refusal.dimension().countsTokens() ? "tokens" : "requests";
		String where = "for " + call.model() + " in organization " + ORGANIZATION + " on "
				+ ChatCompletionsWire.rateName(refusal.dimension());
		String message;
		if (refusal.tooLarge()) {
			message = ChatCompletionsWire.tooLargeMessage(where, refusal)
					+ " Visit https://platform.openai.com/account/rate-limits to learn more.";
		}
		else {
			message = "Rate limit reached " + where + ": Limit " + refusal.limit() + ", Used " + refusal.used()
					+ ", Requested " + refusal.requested() + ". Please try again in "
					+ Formats.goDuration(refusal.retryAfter())
					+ ". Visit https://platform.openai.com/account/rate-limits to learn more.";
		}
		if (call.operation() == Operation.RESPONSES && call.stream()) {
			// a streamed Responses call learns of the limit after HTTP 200, in the stream
			Map<String, String> streamHeaders = new LinkedHashMap<>();
			streamHeaders.put("content-type", streamContentType());
			streamHeaders.putAll(headers);
			return new Reply(200, streamHeaders,
					ResponsesWire.failedStream(call, now.getEpochSecond(), "rate_limit_exceeded", message));
		}
		return Reply.json(429, headers, Json.write(ChatCompletionsWire.error(message, type, "rate_limit_exceeded")));
	}

	@Override
	public Reply exhausted(CallRequest call, String requestId, Instant now) {
		String message = "You exceeded your current quota, please check your plan and billing details. "
				+ "For more information on this error, read the docs: "
				+ "https://platform.openai.com/docs/guides/error-codes/api-errors.";
		return Reply.json(429, baseHeaders(requestId),
				Json.write(ChatCompletionsWire.error(message, "insufficient_quota", "insufficient_quota")));
	}

	@Override
	public Reply badRequest(String message, String requestId) {
		return Reply.json(400, baseHeaders(requestId),
				Json.write(ChatCompletionsWire.error(message, "invalid_request_error", null)));
	}

	@Override
	public Reply serverError(boolean overloaded, String requestId) {
		if (overloaded) {
			return Reply.json(503, baseHeaders(requestId), Json.write(ChatCompletionsWire
				.error("The engine is currently overloaded, please try again later.", "server_error", null)));
		}
		return Reply.json(500, baseHeaders(requestId), Json.write(ChatCompletionsWire
			.error("The server had an error while processing your request. Sorry about that!", "server_error", null)));
	}

}
