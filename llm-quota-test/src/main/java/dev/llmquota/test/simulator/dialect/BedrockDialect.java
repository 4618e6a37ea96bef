package dev.llmquota.test.simulator.dialect;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.llmquota.test.simulator.quota.Dimension;
import dev.llmquota.test.simulator.quota.DimensionState;
import dev.llmquota.test.simulator.quota.OutputPolicy;
import dev.llmquota.test.simulator.quota.Refusal;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Amazon Bedrock Converse: {@code POST /model/{modelId}/converse}, no rate-limit headers,
 * errors named in {@code x-amzn-ErrorType} ({@code ThrottlingException} 429,
 * {@code ServiceQuotaExceededException} 400). ConverseStream's binary event stream is not
 * served.
 */
public final class BedrockDialect implements Dialect {

	private static final Pattern PATH = Pattern.compile("/model/([^/]+)/converse");

	private static final String CORAL = ":http://internal.amazon.com/coral/com.amazon.bedrock/";

	@Override
	public String id() {
		return "bedrock";
	}

	@Override
	public Route route(String path, Map<String, String> query) {
		Matcher matcher = PATH.matcher(path);
		return matcher.matches() ? new Route(PathSegments.decode(matcher.group(1)), false, query) : null;
	}

	@Override
	public CallRequest read(Route route, JsonNode body) {
		JsonNode messages = Json.requiredArray(body, "messages");
		StringBuilder text = new StringBuilder();
		body.path("system").forEach((block) -> text.append(Json.text(block.get("text"))));
		for (JsonNode message : messages) {
			text.append(Json.text(message.get("content")));
		}
		long input = TokenCounter.heuristic(text.toString()) + (long) TokenCounter.PER_MESSAGE * messages.size();
		long maxTokens = Json.optionalCount(body.get("inferenceConfig"), "maxTokens");
		return new CallRequest(route.pathModel(), input, maxTokens, false, true, null);
	}

	@Override
	public OutputPolicy defaultOutputPolicy() {
		return OutputPolicy.RESERVE_AND_REFUND;
	}

	@Override
	public String newRequestId() {
		return UUID.randomUUID().toString();
	}

	private static Map<String, String> baseHeaders(String requestId) {
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put("x-amzn-RequestId", requestId);
		return headers;
	}

	@Override
	public Map<String, String> successHeaders(CallRequest call, String requestId, Map<Dimension, DimensionState> states,
			Instant now) {
		return baseHeaders(requestId);
	}

	@Override
	public Map<String, String> garbageHeaders() {
		return Map.of("x-amzn-ErrorType", ":::", "x-amzn-RequestId", "");
	}

	@Override
	public String completionBody(CallRequest call, Completion completion) {
		ObjectNode body = Json.object();
		ObjectNode message = body.putObject("output").putObject("message");
		message.put("role", "assistant");
		message.putArray("content").addObject().put("text", completion.text());
		body.put("stopReason", "end_turn");
		ObjectNode usage = body.putObject("usage");
		usage.put("inputTokens", completion.inputTokens());
		usage.put("outputTokens", completion.outputTokens());
		usage.put("totalTokens", completion.totalTokens());
		body.putObject("metrics").put("latencyMs", completion.latencyMillis());
		return Json.write(body);
	}

	private static Reply error(int status, String type, String message, String requestId) {
		Map<String, String> headers = baseHeaders(requestId);
		headers.put("x-amzn-ErrorType", type + CORAL);
		ObjectNode body = Json.object();
		body.put("message", message);
		return Reply.json(status, headers, Json.write(body));
	}

	@Override
	public Reply refusal(CallRequest call, Refusal refusal, Map<Dimension, DimensionState> states, String requestId,
			Instant now) {
		String message = switch (refusal.dimension()) {
			case TOKENS_PER_DAY -> "Too many tokens per day, please wait before trying again.";
			case REQUESTS_PER_DAY -> "Too many requests per day, please wait before trying again.";
			case TOKENS_PER_MINUTE, INPUT_TOKENS_PER_MINUTE, OUTPUT_TOKENS_PER_MINUTE ->
				"Too many tokens, please wait before trying again.";
			default -> "Too many requests, please wait before trying again.";
		};
		return error(429, "ThrottlingException", message, requestId);
	}

	@Override
	public Reply exhausted(CallRequest call, String requestId, Instant now) {
		return error(400, "ServiceQuotaExceededException",
				"Your request exceeds the service quota for your account. You can view your quotas at Viewing service "
						+ "quotas. You can resubmit your request later.",
				requestId);
	}

	@Override
	public Reply badRequest(String message, String requestId) {
		return error(400, "ValidationException", message, requestId);
	}

	@Override
	public Reply serverError(boolean overloaded, String requestId) {
		return overloaded
				? error(503, "ServiceUnavailableException", "Service Unavailable. Please try your request again.",
						requestId)
				: error(500, "InternalServerException", "The server encountered an internal error.", requestId);
	}

}
