package dev.llmquota.test.simulator.dialect;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.llmquota.test.simulator.quota.Dimension;
import dev.llmquota.test.simulator.quota.DimensionState;
import dev.llmquota.test.simulator.quota.OutputPolicy;
import dev.llmquota.test.simulator.quota.Refusal;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Anthropic Messages: {@code POST /v1/messages}, {@code anthropic-ratelimit-*} headers
 * with RFC 3339 resets, SSE usage on {@code message_start} and {@code message_delta},
 * {@code rate_limit_error}, {@code overloaded_error} (529) and the spend cap.
 */
public final class AnthropicDialect implements StreamingDialect {

	static final String ORGANIZATION = "5e1a0c3d-7b2f-4c8e-9a61-0f2d4b6c8e10";

	private static final String RATE_LIMIT_TAIL = ". For details, refer to: https://docs.claude.com/en/api/rate-limits. "
			+ "You can see the response headers for current usage. Please reduce the prompt length or the maximum "
			+ "tokens requested, or try again later. You may also contact sales at "
			+ "https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase.";

	@Override
	public String id() {
		return "anthropic";
	}

	@Override
	public Route route(String path, Map<String, String> query) {
		return "/v1/messages".equals(path) ? new Route(null, false, query) : null;
	}

	@Override
	public CallRequest read(Route route, JsonNode body) {
		String model = Json.requiredString(body, "model");
		long maxTokens = Json.optionalCount(body, "max_tokens");
		if (maxTokens == 0) {
			throw new BadRequestException("max_tokens: Field required");
		}
		JsonNode messages = Json.requiredArray(body, "messages");
		StringBuilder text = new StringBuilder(Json.text(body.get("system")));
		for (JsonNode message : messages) {
			text.append(Json.text(message.get("content")));
		}
		long input = TokenCounter.heuristic(text.toString()) + (long) TokenCounter.PER_MESSAGE * messages.size();
		return new CallRequest(model, input, maxTokens, body.path("stream").asBoolean(false), true, null);
	}

	@Override
	public OutputPolicy defaultOutputPolicy() {
		return OutputPolicy.REAL_TIME;
	}

	@Override
	public String newRequestId() {
		return "req_011C" + UUID.randomUUID().toString().replace("-", "").substring(0, 20);
	}

	@Override
	public String newMessageId() {
		return "msg_01" + UUID.randomUUID().toString().replace("-", "").substring(0, 22);
	}

	private Map<String, String> baseHeaders(String requestId) {
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put("request-id", requestId);
		headers.put("anthropic-organization-id", ORGANIZATION);
		return headers;
	}

	@Override
	public Map<String, String> successHeaders(CallRequest call, String requestId, Map<Dimension, DimensionState> states,
			Instant now) {
		Map<String, String> headers = baseHeaders(requestId);
		headers.putAll(rateLimitHeaders(states, now));
		return headers;
	}

	private static Map<String, String> rateLimitHeaders(Map<Dimension, DimensionState> states, Instant now) {
		Map<String, String> headers = new LinkedHashMap<>();
		put(headers, "requests", states.get(Dimension.REQUESTS_PER_MINUTE), false, now);
		DimensionState input = states.get(Dimension.INPUT_TOKENS_PER_MINUTE);
		DimensionState output = states.get(Dimension.OUTPUT_TOKENS_PER_MINUTE);
		put(headers, "input-tokens", input, true, now);
		put(headers, "output-tokens", output, true, now);
		DimensionState tokens = states.get(Dimension.TOKENS_PER_MINUTE);
		if (tokens == null && input != null && output != null) {
			// without a combined limit Anthropic reports input plus output totals
			tokens = new DimensionState(Dimension.TOKENS_PER_MINUTE, input.scope(), input.limit() + output.limit(),
					input.remaining() + output.remaining(),
					(input.untilFull().compareTo(output.untilFull()) > 0) ? input.untilFull() : output.untilFull());
		}
		put(headers, "tokens", tokens, true, now);
		return headers;
	}

	private static void put(Map<String, String> headers, String name, DimensionState state, boolean tokens,
			Instant now) {
		if (state == null) {
			return;
		}
		// token remainders are published rounded to the nearest thousand
		long remaining = tokens ? Math.min(state.limit(), Math.round(state.remaining() / 1000.0) * 1000)
				: state.remaining();
		headers.put("anthropic-ratelimit-" + name + "-limit", Long.toString(state.limit()));
		headers.put("anthropic-ratelimit-" + name + "-remaining", Long.toString(remaining));
		headers.put("anthropic-ratelimit-" + name + "-reset", Formats.rfc3339(now.plus(state.untilFull())));
	}

	@Override
	public Map<String, String> garbageHeaders() {
		return Map.of("anthropic-ratelimit-tokens-reset", "tomorrow", "anthropic-ratelimit-tokens-remaining", "n/a",
				"retry-after", "Fri, 31 Feb 2025 25:61:00 XYZ");
	}

	@Override
	public String completionBody(CallRequest call, Completion completion) {
		ObjectNode body = message(completion);
		ObjectNode block = body.putArray("content").addObject();
		block.put("type", "text");
		block.put("text", completion.text());
		body.put("stop_reason", "end_turn");
		body.putNull("stop_sequence");
		body.set("usage", usage(completion.inputTokens(), completion.outputTokens()));
		return Json.write(body);
	}

	private static ObjectNode message(Completion completion) {
		ObjectNode body = Json.object();
		body.put("id", completion.messageId());
		body.put("type", "message");
		body.put("role", "assistant");
		body.put("model", completion.model());
		return body;
	}

	private static ObjectNode usage(long input, long output) {
		ObjectNode usage = Json.object();
		usage.put("input_tokens", input);
		usage.put("cache_creation_input_tokens", 0);
		usage.put("cache_read_input_tokens", 0);
		ObjectNode cache = usage.putObject("cache_creation");
		cache.put("ephemeral_5m_input_tokens", 0);
		cache.put("ephemeral_1h_input_tokens", 0);
		usage.put("output_tokens", output);
		usage.put("service_tier", "standard");
		return usage;
	}

	@Override
	public String streamContentType() {
		return "text/event-stream; charset=utf-8";
	}

	private static String event(String type, ObjectNode data) {
		data.put("type", type);
		return "event: " + type + "\ndata: " + Json.write(data) + "\n\n";
	}

	@Override
	public List<String> streamHead(CallRequest call, Completion completion) {
		ObjectNode message = message(completion);
		message.putArray("content");
		message.putNull("stop_reason");
		message.putNull("stop_sequence");
		message.set("usage", usage(completion.inputTokens(), 1));
		ObjectNode start = Json.object();
		start.put("type", "message_start");
		start.set("message", message);
		ObjectNode blockStart = Json.object();
		blockStart.put("index", 0);
		ObjectNode block = blockStart.putObject("content_block");
		block.put("type", "text");
		block.put("text", "");
		return List.of(event("message_start", start), event("content_block_start", blockStart),
				event("ping", Json.object()));
	}

	@Override
	public String streamDelta(CallRequest call, Completion completion, String text) {
		ObjectNode data = Json.object();
		data.put("type", "content_block_delta");
		data.put("index", 0);
		ObjectNode delta = data.putObject("delta");
		delta.put("type", "text_delta");
		delta.put("text", text);
		return event("content_block_delta", data);
	}

	@Override
	public List<String> streamTail(CallRequest call, Completion completion) {
		ObjectNode stop = Json.object();
		stop.put("type", "content_block_stop");
		stop.put("index", 0);
		ObjectNode messageDelta = Json.object();
		messageDelta.put("type", "message_delta");
		ObjectNode delta = messageDelta.putObject("delta");
		delta.put("stop_reason", "end_turn");
		delta.putNull("stop_sequence");
		messageDelta.putObject("usage").put("output_tokens", completion.outputTokens());
		return List.of(event("content_block_stop", stop), event("message_delta", messageDelta),
				event("message_stop", Json.object()));
	}

	private static String error(String type, String message, String requestId, String errorCode) {
		ObjectNode body = Json.object();
		body.put("type", "error");
		ObjectNode error = body.putObject("error");
		error.put("type", type);
		error.put("message", message);
		if (errorCode != null) {
			error.putObject("details").put("error_code", errorCode);
		}
		body.put("request_id", requestId);
		return Json.write(body);
	}

	@Override
	public Reply refusal(CallRequest call, Refusal refusal, Map<Dimension, DimensionState> states, String requestId,
			Instant now) {
		Map<String, String> headers = baseHeaders(requestId);
		if (refusal.retryAfter() != null) {
			headers.put("retry-after", Long.toString(Math.max(1, Formats.ceilSeconds(refusal.retryAfter()))));
		}
		headers.put("x-should-retry", "true");
		headers.putAll(rateLimitHeaders(states, now));
		String message = "This request would exceed the rate limit for your organization (" + ORGANIZATION + ") of "
				+ Formats.grouped(refusal.limit()) + " " + name(refusal.dimension()) + RATE_LIMIT_TAIL;
		return Reply.json(429, headers, error("rate_limit_error", message, requestId, null));
	}

	private static String name(Dimension dimension) {
		return switch (dimension) {
			case REQUESTS_PER_MINUTE -> "requests per minute";
			case TOKENS_PER_MINUTE -> "tokens per minute";
			case INPUT_TOKENS_PER_MINUTE -> "input tokens per minute";
			case OUTPUT_TOKENS_PER_MINUTE -> "output tokens per minute";
			case CONCURRENT_REQUESTS -> "concurrent requests";
			case REQUESTS_PER_DAY -> "requests per day";
			case TOKENS_PER_DAY -> "tokens per day";
		};
	}

	@Override
	public Reply exhausted(CallRequest call, String requestId, Instant now) {
		LocalDate nextMonth = LocalDate.ofInstant(now, ZoneOffset.UTC).withDayOfMonth(1).plusMonths(1);
		String message = "You have reached your API usage limits: your organization has crossed its monthly API usage "
				+ "threshold, set based on your organization's API tier. You will regain access on " + nextMonth
				+ " at 00:00 UTC.";
		return Reply.json(429, baseHeaders(requestId),
				error("rate_limit_error", message, requestId, "enforced_spend_limit_reached"));
	}

	@Override
	public Reply badRequest(String message, String requestId) {
		return Reply.json(400, baseHeaders(requestId), error("invalid_request_error", message, requestId, null));
	}

	@Override
	public Reply serverError(boolean overloaded, String requestId) {
		Map<String, String> headers = baseHeaders(requestId);
		headers.put("x-should-retry", "true");
		return overloaded ? Reply.json(529, headers, error("overloaded_error", "Overloaded", requestId, null))
				: Reply.json(500, headers, error("api_error", "Internal server error", requestId, null));
	}

}
