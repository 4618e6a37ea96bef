package dev.llmquota.test.simulator.dialect;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
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
		return "/v1/messages".equals(path) ? new Route(null, false, query, Operation.CHAT, "messages") : null;
	}

	@Override
	public CallRequest read(Route route, JsonNode body) {
		return AnthropicWire.read(route, Json.requiredString(body, "model"), body,
				body.path("stream").asBoolean(false));
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
	public String newMessageId(CallRequest call) {
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
		return AnthropicWire.body(completion);
	}

	@Override
	public String streamContentType() {
		return "text/event-stream; charset=utf-8";
	}

	private static byte[] event(ObjectNode data) {
		return ("event: " + data.get("type").stringValue() + "\ndata: " + Json.write(data) + "\n\n")
			.getBytes(StandardCharsets.UTF_8);
	}

	@Override
	public List<byte[]> streamHead(CallRequest call, Completion completion) {
		List<byte[]> frames = new ArrayList<>();
		AnthropicWire.streamHead(completion).forEach((data) -> frames.add(event(data)));
		ObjectNode ping = Json.object();
		ping.put("type", "ping");
		frames.add(event(ping));
		return frames;
	}

	@Override
	public byte[] streamDelta(CallRequest call, Completion completion, int position, String text) {
		return event(AnthropicWire.streamDelta(text));
	}

	@Override
	public List<byte[]> streamTail(CallRequest call, Completion completion, int position) {
		return AnthropicWire.streamTail(completion).stream().map(AnthropicDialect::event).toList();
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
