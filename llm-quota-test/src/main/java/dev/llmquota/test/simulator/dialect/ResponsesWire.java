package dev.llmquota.test.simulator.dialect;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * OpenAI's Responses API wire: request reading, the response object and its typed SSE
 * events, and the in-stream {@code response.failed} refusal.
 */
final class ResponsesWire {

	private ResponsesWire() {
	}

	/**
	 * Reads {@code {model, input, instructions?, max_output_tokens?, stream?}}; input is
	 * a string (one user message) or a list of items, counted like chat messages (role
	 * and text plus 3 per item, instructions as one more system message, plus 3).
	 */
	static CallRequest read(Route route, JsonNode body) {
		String model = Json.requiredString(body, "model");
		JsonNode input = body.get("input");
		long tokens = TokenCounter.PER_MESSAGE;
		if (input != null && input.isString() && !input.stringValue().isEmpty()) {
			tokens += TokenCounter.PER_MESSAGE + TokenCounter.openAi(model, "user")
					+ TokenCounter.openAi(model, input.stringValue());
		}
		else if (input != null && input.isArray() && !input.isEmpty()) {
			for (JsonNode item : input) {
				if (!item.isObject()) {
					throw new BadRequestException("input: each item must be an object");
				}
				tokens += TokenCounter.PER_MESSAGE + TokenCounter.openAi(model, Json.text(item.get("role")))
						+ TokenCounter.openAi(model, Json.text(item.get("content")))
						+ TokenCounter.openAi(model, Json.text(item.get("output")));
			}
		}
		else {
			throw new BadRequestException("input: a non-empty string or array of items is required");
		}
		String instructions = Json.text(body.get("instructions"));
		if (!instructions.isEmpty()) {
			tokens += TokenCounter.PER_MESSAGE + TokenCounter.openAi(model, "system")
					+ TokenCounter.openAi(model, instructions);
		}
		long maxTokens = Json.optionalCount(body, "max_output_tokens");
		return CallRequest.generating(route, model, tokens, maxTokens, body.path("stream").asBoolean(false), true,
				null);
	}

	static String responseId() {
		return "resp_" + UUID.randomUUID().toString().replace("-", "")
				+ UUID.randomUUID().toString().replace("-", "").substring(0, 16);
	}

	/**
	 * The id of the answer's one message item, derived from the response id so every
	 * event of a stream names the same item.
	 */
	private static String itemId(Completion completion) {
		return "msg_" + completion.messageId().substring("resp_".length());
	}

	static String body(CallRequest call, Completion completion) {
		return Json.write(response(call, completion.messageId(), completion.model(), completion.createdEpochSecond(),
				"completed", completion));
	}

	/**
	 * The response object; output and usage only when given the completed answer.
	 */
	private static ObjectNode response(CallRequest call, String id, String model, long created, String status,
			Completion completed) {
		ObjectNode response = Json.object();
		response.put("id", id);
		response.put("object", "response");
		response.put("created_at", created);
		response.put("status", status);
		response.putNull("error");
		response.putNull("incomplete_details");
		response.putNull("instructions");
		if (call.maxTokens() > 0) {
			response.put("max_output_tokens", call.maxTokens());
		}
		else {
			response.putNull("max_output_tokens");
		}
		response.put("model", model);
		if (completed != null) {
			response.putArray("output").add(item(completed, "completed", completed.text()));
		}
		else {
			response.putArray("output");
		}
		response.put("parallel_tool_calls", true);
		response.putNull("previous_response_id");
		response.put("store", true);
		response.put("temperature", 1.0);
		response.putObject("text").putObject("format").put("type", "text");
		response.put("tool_choice", "auto");
		response.putArray("tools");
		response.put("top_p", 1.0);
		response.put("truncation", "disabled");
		if (completed != null) {
			response.set("usage", usage(completed));
		}
		else {
			response.putNull("usage");
		}
		response.putObject("metadata");
		return response;
	}

	private static ObjectNode item(Completion completion, String status, String text) {
		ObjectNode item = Json.object();
		item.put("type", "message");
		item.put("id", itemId(completion));
		item.put("status", status);
		item.put("role", "assistant");
		ArrayNode content = item.putArray("content");
		if (text != null) {
			content.add(outputText(text));
		}
		return item;
	}

	private static ObjectNode outputText(String text) {
		ObjectNode part = Json.object();
		part.put("type", "output_text");
		part.put("text", text);
		part.putArray("annotations");
		return part;
	}

	private static ObjectNode usage(Completion completion) {
		ObjectNode usage = Json.object();
		usage.put("input_tokens", completion.inputTokens());
		usage.putObject("input_tokens_details").put("cached_tokens", 0);
		usage.put("output_tokens", completion.outputTokens());
		usage.putObject("output_tokens_details").put("reasoning_tokens", 0);
		usage.put("total_tokens", completion.totalTokens());
		return usage;
	}

	private static byte[] event(String type, int sequence, ObjectNode data) {
		ObjectNode event = Json.object();
		event.put("type", type);
		event.put("sequence_number", sequence);
		event.setAll(data);
		return ("event: " + type + "\ndata: " + Json.write(event) + "\n\n").getBytes(StandardCharsets.UTF_8);
	}

	private static ObjectNode located(Completion completion) {
		ObjectNode data = Json.object();
		data.put("item_id", itemId(completion));
		data.put("output_index", 0);
		data.put("content_index", 0);
		return data;
	}

	static List<byte[]> streamHead(CallRequest call, Completion completion) {
		List<byte[]> frames = new ArrayList<>();
		ObjectNode started = response(call, completion.messageId(), completion.model(), completion.createdEpochSecond(),
				"in_progress", null);
		frames.add(event("response.created", 0, wrap("response", started)));
		frames.add(event("response.in_progress", 1, wrap("response", started)));
		ObjectNode added = Json.object();
		added.put("output_index", 0);
		ObjectNode item = item(completion, "in_progress", null);
		added.set("item", item);
		frames.add(event("response.output_item.added", 2, added));
		ObjectNode part = located(completion);
		part.set("part", outputText(""));
		frames.add(event("response.content_part.added", 3, part));
		return frames;
	}

	static byte[] streamDelta(Completion completion, int position, String text) {
		ObjectNode delta = located(completion);
		delta.put("delta", text);
		delta.putArray("logprobs");
		return event("response.output_text.delta", position, delta);
	}

	static List<byte[]> streamTail(CallRequest call, Completion completion, int position) {
		ObjectNode textDone = located(completion);
		textDone.put("text", completion.text());
		textDone.putArray("logprobs");
		ObjectNode partDone = located(completion);
		partDone.set("part", outputText(completion.text()));
		ObjectNode itemDone = Json.object();
		itemDone.put("output_index", 0);
		itemDone.set("item", item(completion, "completed", completion.text()));
		ObjectNode completed = wrap("response", response(call, completion.messageId(), completion.model(),
				completion.createdEpochSecond(), "completed", completion));
		return List.of(event("response.output_text.done", position, textDone),
				event("response.content_part.done", position + 1, partDone),
				event("response.output_item.done", position + 2, itemDone),
				event("response.completed", position + 3, completed));
	}

	/**
	 * A refusal after HTTP 200, as OpenAI streams it: {@code response.created}, then
	 * {@code response.failed} carrying the error, then the end of the stream.
	 */
	static String failedStream(CallRequest call, long created, String code, String message) {
		String id = responseId();
		ObjectNode started = response(call, id, call.model(), created, "in_progress", null);
		ObjectNode failed = response(call, id, call.model(), created, "failed", null);
		ObjectNode error = Json.object();
		error.put("code", code);
		error.put("message", message);
		failed.set("error", error);
		return new String(event("response.created", 0, wrap("response", started)), StandardCharsets.UTF_8)
				+ new String(event("response.failed", 1, wrap("response", failed)), StandardCharsets.UTF_8);
	}

	private static ObjectNode wrap(String name, JsonNode value) {
		ObjectNode data = Json.object();
		data.set(name, value);
		return data;
	}

}
