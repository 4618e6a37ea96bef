package dev.llmquota.test.simulator.dialect;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.llmquota.test.simulator.quota.Dimension;
import dev.llmquota.test.simulator.quota.DimensionState;
import dev.llmquota.test.simulator.quota.OutputPolicy;
import dev.llmquota.test.simulator.quota.Refusal;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Ollama: {@code POST /api/chat}, streamed as NDJSON by default, usage in
 * {@code prompt_eval_count} and {@code eval_count}, and {@code POST /api/embed}; errors
 * are {@code {"error": "..."}}.
 */
public final class OllamaDialect implements StreamingDialect {

	@Override
	public String id() {
		return "ollama";
	}

	@Override
	public Route route(String path, Map<String, String> query) {
		return switch (path) {
			case "/api/chat" -> new Route(null, false, query, Operation.CHAT, "chat");
			case "/api/embed" -> new Route(null, false, query, Operation.EMBEDDINGS, "embed");
			default -> null;
		};
	}

	@Override
	public CallRequest read(Route route, JsonNode body) {
		String model = Json.requiredString(body, "model");
		if (route.operation() == Operation.EMBEDDINGS) {
			return readEmbed(route, model, body);
		}
		JsonNode messages = Json.requiredArray(body, "messages");
		StringBuilder text = new StringBuilder();
		for (JsonNode message : messages) {
			text.append(Json.text(message.get("content")));
		}
		long input = TokenCounter.heuristic(text.toString()) + (long) TokenCounter.PER_MESSAGE * messages.size();
		// -1 (Ollama's default, no limit) and -2 (fill the context) name no ceiling
		long maxTokens = Json.optionalCeiling(body.get("options"), "num_predict");
		return CallRequest.generating(route, model, input, maxTokens, body.path("stream").asBoolean(true), true, null);
	}

	/**
	 * Reads {@code {model, input}}: one string or a list of them.
	 */
	private static CallRequest readEmbed(Route route, String model, JsonNode body) {
		JsonNode input = body.get("input");
		if (input != null && input.isString() && !input.stringValue().isEmpty()) {
			return CallRequest.embedding(route, model, TokenCounter.heuristic(input.stringValue()), 1, false, null);
		}
		if (input == null || !input.isArray() || input.isEmpty()) {
			throw new BadRequestException("input: a non-empty string or list of strings is required");
		}
		long tokens = 0;
		for (JsonNode text : input) {
			if (!text.isString()) {
				throw new BadRequestException("input: each element must be a string");
			}
			tokens += TokenCounter.heuristic(text.stringValue());
		}
		return CallRequest.embedding(route, model, tokens, input.size(), false, null);
	}

	@Override
	public OutputPolicy defaultOutputPolicy() {
		return OutputPolicy.RESERVE_AND_REFUND;
	}

	@Override
	public String newRequestId() {
		return UUID.randomUUID().toString();
	}

	@Override
	public Map<String, String> successHeaders(CallRequest call, String requestId, Map<Dimension, DimensionState> states,
			Instant now) {
		return Map.of();
	}

	@Override
	public Map<String, String> garbageHeaders() {
		return Map.of("retry-after", "-1");
	}

	private static ObjectNode chunk(Completion completion, String text, boolean done) {
		ObjectNode body = Json.object();
		body.put("model", completion.model());
		body.put("created_at", Instant.ofEpochSecond(completion.createdEpochSecond()).toString());
		ObjectNode message = body.putObject("message");
		message.put("role", "assistant");
		message.put("content", text);
		body.put("done", done);
		if (done) {
			long nanos = completion.latencyMillis() * 1_000_000;
			body.put("done_reason", "stop");
			body.put("total_duration", nanos);
			body.put("load_duration", 0);
			body.put("prompt_eval_count", completion.inputTokens());
			body.put("prompt_eval_duration", 0);
			body.put("eval_count", completion.outputTokens());
			body.put("eval_duration", nanos);
		}
		return body;
	}

	@Override
	public String completionBody(CallRequest call, Completion completion) {
		if (call.operation() == Operation.EMBEDDINGS) {
			ObjectNode body = Json.object();
			body.put("model", completion.model());
			ArrayNode embeddings = body.putArray("embeddings");
			for (int i = 0; i < call.inputs(); i++) {
				embeddings.add(EmbeddingsWire.vector(i));
			}
			body.put("total_duration", completion.latencyMillis() * 1_000_000);
			body.put("load_duration", 0);
			body.put("prompt_eval_count", completion.inputTokens());
			return Json.write(body);
		}
		return Json.write(chunk(completion, completion.text(), true));
	}

	@Override
	public String streamContentType() {
		return "application/x-ndjson";
	}

	@Override
	public List<byte[]> streamHead(CallRequest call, Completion completion) {
		return List.of();
	}

	private static byte[] line(JsonNode data) {
		return (Json.write(data) + "\n").getBytes(StandardCharsets.UTF_8);
	}

	@Override
	public byte[] streamDelta(CallRequest call, Completion completion, int position, String text) {
		return line(chunk(completion, text, false));
	}

	@Override
	public List<byte[]> streamTail(CallRequest call, Completion completion, int position) {
		return List.of(line(chunk(completion, "", true)));
	}

	private static Reply error(int status, String message) {
		ObjectNode body = Json.object();
		body.put("error", message);
		return Reply.json(status, Map.of(), Json.write(body));
	}

	@Override
	public Reply refusal(CallRequest call, Refusal refusal, Map<Dimension, DimensionState> states, String requestId,
			Instant now) {
		if (refusal.dimension() == Dimension.CONCURRENT_REQUESTS) {
			return error(503, "server busy, please try again.  maximum pending requests exceeded");
		}
		return error(429, "rate limit exceeded on " + refusal.dimension().id());
	}

	@Override
	public Reply exhausted(CallRequest call, String requestId, Instant now) {
		return error(429, "usage limit reached for " + call.model());
	}

	@Override
	public Reply badRequest(String message, String requestId) {
		return error(400, message);
	}

	@Override
	public Reply serverError(boolean overloaded, String requestId) {
		return overloaded ? error(503, "server busy, please try again.  maximum pending requests exceeded")
				: error(500, "llama runner process has terminated");
	}

}
