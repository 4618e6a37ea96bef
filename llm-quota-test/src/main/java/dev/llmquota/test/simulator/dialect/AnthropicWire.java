package dev.llmquota.test.simulator.dialect;

import java.util.List;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The Messages wire format Anthropic and Bedrock's InvokeModel of Claude share: request
 * reading, the message body and the stream events (as JSON objects; each dialect frames
 * them its own way).
 */
final class AnthropicWire {

	private AnthropicWire() {
	}

	/**
	 * Reads {@code {max_tokens, messages, system?}}: input counted with the heuristic
	 * over the system prompt and every message, plus 3 per message.
	 */
	static CallRequest read(Route route, String model, JsonNode body, boolean stream) {
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
		return CallRequest.generating(route, model, input, maxTokens, stream, true, null);
	}

	static String body(Completion completion) {
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

	private static ObjectNode event(String type) {
		ObjectNode event = Json.object();
		event.put("type", type);
		return event;
	}

	/**
	 * {@code message_start} (input usage) and {@code content_block_start}.
	 */
	static List<ObjectNode> streamHead(Completion completion) {
		ObjectNode message = message(completion);
		message.putArray("content");
		message.putNull("stop_reason");
		message.putNull("stop_sequence");
		message.set("usage", usage(completion.inputTokens(), 1));
		ObjectNode start = event("message_start");
		start.set("message", message);
		ObjectNode blockStart = event("content_block_start");
		blockStart.put("index", 0);
		ObjectNode block = blockStart.putObject("content_block");
		block.put("type", "text");
		block.put("text", "");
		return List.of(start, blockStart);
	}

	static ObjectNode streamDelta(String text) {
		ObjectNode data = event("content_block_delta");
		data.put("index", 0);
		ObjectNode delta = data.putObject("delta");
		delta.put("type", "text_delta");
		delta.put("text", text);
		return data;
	}

	/**
	 * {@code content_block_stop}, {@code message_delta} (output usage) and
	 * {@code message_stop}.
	 */
	static List<ObjectNode> streamTail(Completion completion) {
		ObjectNode stop = event("content_block_stop");
		stop.put("index", 0);
		ObjectNode messageDelta = event("message_delta");
		ObjectNode delta = messageDelta.putObject("delta");
		delta.put("stop_reason", "end_turn");
		delta.putNull("stop_sequence");
		messageDelta.putObject("usage").put("output_tokens", completion.outputTokens());
		return List.of(stop, messageDelta, event("message_stop"));
	}

}
