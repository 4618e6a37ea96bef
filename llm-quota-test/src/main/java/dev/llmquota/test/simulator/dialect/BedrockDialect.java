package dev.llmquota.test.simulator.dialect;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
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
 * Amazon Bedrock runtime: {@code POST /model/{modelId}/converse},
 * {@code /converse-stream}, {@code /invoke} (Claude's Messages body, or an embedding
 * model's) and {@code /invoke-with-response-stream}; streams in AWS's binary event-stream
 * framing; no rate-limit headers, InvokeModel's token counts in {@code x-amzn-bedrock-*}
 * headers, errors named in {@code x-amzn-ErrorType} ({@code ThrottlingException} 429,
 * {@code ServiceQuotaExceededException} 400).
 */
public final class BedrockDialect implements StreamingDialect {

	private static final Pattern PATH = Pattern
		.compile("/model/([^/]+)/(converse|converse-stream|invoke|invoke-with-response-stream)");

	private static final String CORAL = ":http://internal.amazon.com/coral/com.amazon.bedrock/";

	@Override
	public String id() {
		return "bedrock";
	}

	@Override
	public Route route(String path, Map<String, String> query) {
		Matcher matcher = PATH.matcher(path);
		if (!matcher.matches()) {
			return null;
		}
		String model = PathSegments.decode(matcher.group(1));
		String api = matcher.group(2);
		Operation operation = (api.startsWith("invoke") && model.contains("embed")) ? Operation.EMBEDDINGS
				: Operation.CHAT;
		return new Route(model, api.endsWith("-stream"), query, operation, api);
	}

	@Override
	public CallRequest read(Route route, JsonNode body) {
		if (route.operation() == Operation.EMBEDDINGS) {
			if (route.stream()) {
				throw new BadRequestException("The model is unsupported for streaming.");
			}
			JsonNode text = body.get("inputText");
			if (text == null || !text.isString() || text.stringValue().isEmpty()) {
				throw new BadRequestException("Malformed input request: #: required key [inputText] not found, "
						+ "please reformat your input and try again.");
			}
			return CallRequest.embedding(route, route.pathModel(), TokenCounter.heuristic(text.stringValue()), 1, false,
					null);
		}
		if (route.api().startsWith("invoke")) {
			if (!body.path("anthropic_version").isString()) {
				throw new BadRequestException("Malformed input request: #: required key [anthropic_version] not found, "
						+ "please reformat your input and try again.");
			}
			return AnthropicWire.read(route, route.pathModel(), body, route.stream());
		}
		JsonNode messages = Json.requiredArray(body, "messages");
		StringBuilder text = new StringBuilder();
		body.path("system").forEach((block) -> text.append(Json.text(block.get("text"))));
		for (JsonNode message : messages) {
			text.append(Json.text(message.get("content")));
		}
		long input = TokenCounter.heuristic(text.toString()) + (long) TokenCounter.PER_MESSAGE * messages.size();
		long maxTokens = Json.optionalCount(body.get("inferenceConfig"), "maxTokens");
		return CallRequest.generating(route, route.pathModel(), input, maxTokens, route.stream(), true, null);
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
	public String newMessageId(CallRequest call) {
		return "msg_bdrk_01" + UUID.randomUUID().toString().replace("-", "").substring(0, 22);
	}

	private static boolean invoke(CallRequest call) {
		return call.api().startsWith("invoke");
	}

	@Override
	public String completionBody(CallRequest call, Completion completion) {
		if (call.operation() == Operation.EMBEDDINGS) {
			ObjectNode body = Json.object();
			body.set("embedding", EmbeddingsWire.vector(0));
			body.put("inputTextTokenCount", completion.inputTokens());
			return Json.write(body);
		}
		if (invoke(call)) {
			return AnthropicWire.body(completion);
		}
		ObjectNode body = Json.object();
		ObjectNode message = body.putObject("output").putObject("message");
		message.put("role", "assistant");
		message.putArray("content").addObject().put("text", completion.text());
		body.put("stopReason", "end_turn");
		body.set("usage", usage(completion));
		body.putObject("metrics").put("latencyMs", completion.latencyMillis());
		return Json.write(body);
	}

	private static ObjectNode usage(Completion completion) {
		ObjectNode usage = Json.object();
		usage.put("inputTokens", completion.inputTokens());
		usage.put("outputTokens", completion.outputTokens());
		usage.put("totalTokens", completion.totalTokens());
		return usage;
	}

	@Override
	public Map<String, String> completionHeaders(CallRequest call, Completion completion) {
		if (!invoke(call)) {
			return Map.of();
		}
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put("x-amzn-bedrock-invocation-latency", Long.toString(completion.latencyMillis()));
		headers.put("x-amzn-bedrock-output-token-count", Long.toString(completion.outputTokens()));
		headers.put("x-amzn-bedrock-input-token-count", Long.toString(completion.inputTokens()));
		return headers;
	}

	@Override
	public String streamContentType() {
		return EventStream.CONTENT_TYPE;
	}

	private static byte[] event(String type, ObjectNode payload) {
		return EventStream.event(type, Json.write(payload).getBytes(StandardCharsets.UTF_8));
	}

	/**
	 * InvokeModelWithResponseStream wraps each of the model's own stream events, base64
	 * encoded, in a {@code chunk} event.
	 */
	private static byte[] chunk(ObjectNode modelEvent) {
		ObjectNode payload = Json.object();
		payload.put("bytes",
				Base64.getEncoder().encodeToString(Json.write(modelEvent).getBytes(StandardCharsets.UTF_8)));
		return event("chunk", payload);
	}

	@Override
	public List<byte[]> streamHead(CallRequest call, Completion completion) {
		if (invoke(call)) {
			return AnthropicWire.streamHead(completion).stream().map(BedrockDialect::chunk).toList();
		}
		ObjectNode start = Json.object();
		start.put("role", "assistant");
		return List.of(event("messageStart", start));
	}

	@Override
	public byte[] streamDelta(CallRequest call, Completion completion, int position, String text) {
		if (invoke(call)) {
			return chunk(AnthropicWire.streamDelta(text));
		}
		ObjectNode delta = Json.object();
		delta.put("contentBlockIndex", 0);
		delta.putObject("delta").put("text", text);
		return event("contentBlockDelta", delta);
	}

	@Override
	public List<byte[]> streamTail(CallRequest call, Completion completion, int position) {
		if (invoke(call)) {
			List<ObjectNode> events = AnthropicWire.streamTail(completion);
			ObjectNode metrics = events.get(events.size() - 1).putObject("amazon-bedrock-invocationMetrics");
			metrics.put("inputTokenCount", completion.inputTokens());
			metrics.put("outputTokenCount", completion.outputTokens());
			metrics.put("invocationLatency", completion.latencyMillis());
			metrics.put("firstByteLatency", completion.firstTokenMillis());
			return events.stream().map(BedrockDialect::chunk).toList();
		}
		ObjectNode blockStop = Json.object();
		blockStop.put("contentBlockIndex", 0);
		ObjectNode messageStop = Json.object();
		messageStop.put("stopReason", "end_turn");
		ObjectNode metadata = Json.object();
		metadata.set("usage", usage(completion));
		metadata.putObject("metrics").put("latencyMs", completion.latencyMillis());
		return List.of(event("contentBlockStop", blockStop), event("messageStop", messageStop),
				event("metadata", metadata));
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
