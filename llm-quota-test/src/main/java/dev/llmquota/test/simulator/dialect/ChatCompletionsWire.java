package dev.llmquota.test.simulator.dialect;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;

import dev.llmquota.test.simulator.quota.Dimension;
import dev.llmquota.test.simulator.quota.Refusal;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The Chat Completions wire format OpenAI and Azure OpenAI share: request reading, bodies
 * and SSE chunks.
 */
final class ChatCompletionsWire {

	private ChatCompletionsWire() {
	}

	/**
	 * Reads a request; input counted with the model's encoding as OpenAI's cookbook does
	 * (text of every message, plus 3 per message and 3 to prime the reply).
	 */
	static CallRequest read(Route route, String model, JsonNode body, String apiVersion) {
		JsonNode messages = Json.requiredArray(body, "messages");
		long input = TokenCounter.PER_MESSAGE;
		for (JsonNode message : messages) {
			if (!message.isObject()) {
				throw new BadRequestException("messages: each message must be an object");
			}
			input += TokenCounter.PER_MESSAGE + TokenCounter.openAi(model, Json.text(message.get("role")))
					+ TokenCounter.openAi(model, Json.text(message.get("content")));
		}
		long maxTokens = Json.optionalCount(body, "max_completion_tokens");
		if (maxTokens == 0) {
			maxTokens = Json.optionalCount(body, "max_tokens");
		}
		boolean stream = body.path("stream").asBoolean(false);
		boolean includeUsage = body.path("stream_options").path("include_usage").asBoolean(false);
		return CallRequest.generating(route, model, input, maxTokens, stream, includeUsage, apiVersion);
	}

	static String completionId() {
		return "chatcmpl-" + UUID.randomUUID().toString().replace("-", "").substring(0, 29);
	}

	static String completionBody(Completion completion) {
		ObjectNode body = header(completion, "chat.completion");
		ObjectNode choice = body.putArray("choices").addObject();
		choice.put("index", 0);
		ObjectNode message = choice.putObject("message");
		message.put("role", "assistant");
		message.put("content", completion.text());
		message.putNull("refusal");
		message.putArray("annotations");
		choice.putNull("logprobs");
		choice.put("finish_reason", "stop");
		body.set("usage", usage(completion));
		body.put("service_tier", "default");
		body.put("system_fingerprint", "fp_simulator");
		return Json.write(body);
	}

	private static ObjectNode header(Completion completion, String object) {
		ObjectNode body = Json.object();
		body.put("id", completion.messageId());
		body.put("object", object);
		body.put("created", completion.createdEpochSecond());
		body.put("model", completion.model());
		return body;
	}

	static ObjectNode usage(Completion completion) {
		ObjectNode usage = Json.object();
		usage.put("prompt_tokens", completion.inputTokens());
		usage.put("completion_tokens", completion.outputTokens());
		usage.put("total_tokens", completion.totalTokens());
		ObjectNode prompt = usage.putObject("prompt_tokens_details");
		prompt.put("cached_tokens", 0);
		prompt.put("audio_tokens", 0);
		ObjectNode output = usage.putObject("completion_tokens_details");
		output.put("reasoning_tokens", 0);
		output.put("audio_tokens", 0);
		output.put("accepted_prediction_tokens", 0);
		output.put("rejected_prediction_tokens", 0);
		return usage;
	}

	private static byte[] frame(CallRequest call, Completion completion, ObjectNode delta, String finishReason) {
		ObjectNode chunk = chunk(completion);
		ObjectNode choice = chunk.putArray("choices").addObject();
		choice.put("index", 0);
		choice.set("delta", delta);
		choice.putNull("logprobs");
		if (finishReason != null) {
			choice.put("finish_reason", finishReason);
		}
		else {
			choice.putNull("finish_reason");
		}
		if (call.includeUsage()) {
			chunk.putNull("usage");
		}
		return sse(chunk);
	}

	private static ObjectNode chunk(Completion completion) {
		ObjectNode chunk = header(completion, "chat.completion.chunk");
		chunk.put("service_tier", "default");
		chunk.put("system_fingerprint", "fp_simulator");
		return chunk;
	}

	static List<byte[]> streamHead(CallRequest call, Completion completion) {
		ObjectNode delta = Json.object();
		delta.put("role", "assistant");
		delta.put("content", "");
		delta.putNull("refusal");
		return List.of(frame(call, completion, delta, null));
	}

	static byte[] streamDelta(CallRequest call, Completion completion, String text) {
		ObjectNode delta = Json.object();
		delta.put("content", text);
		return frame(call, completion, delta, null);
	}

	static List<byte[]> streamTail(CallRequest call, Completion completion) {
		byte[] finish = frame(call, completion, Json.object(), "stop");
		byte[] done = "data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8);
		if (!call.includeUsage()) {
			return List.of(finish, done);
		}
		ObjectNode usageChunk = chunk(completion);
		usageChunk.putArray("choices");
		usageChunk.set("usage", usage(completion));
		return List.of(finish, sse(usageChunk), done);
	}

	private static byte[] sse(JsonNode data) {
		return ("data: " + Json.write(data) + "\n\n").getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * The name OpenAI's messages give a dimension, for example
	 * {@code tokens per min (TPM)}.
	 */
	static String rateName(Dimension dimension) {
		return switch (dimension) {
			case REQUESTS_PER_MINUTE -> "requests per min (RPM)";
			case TOKENS_PER_MINUTE -> "tokens per min (TPM)";
			case INPUT_TOKENS_PER_MINUTE -> "input tokens per min (ITPM)";
			case OUTPUT_TOKENS_PER_MINUTE -> "output tokens per min (OTPM)";
			case CONCURRENT_REQUESTS -> "concurrent requests";
			case REQUESTS_PER_DAY -> "requests per day (RPD)";
			case TOKENS_PER_DAY -> "tokens per day (TPD)";
		};
	}

	/**
	 * OpenAI's text for a call that can never fit as it is.
	 */
	static String tooLargeMessage(String where, Refusal refusal) {
		return "Request too large " + where + ": Limit " + refusal.limit() + ", Requested " + refusal.requested()
				+ ". The input or output tokens must be reduced in order to run successfully.";
	}

	static ObjectNode error(String message, String type, String code) {
		ObjectNode body = Json.object();
		ObjectNode error = body.putObject("error");
		error.put("message", message);
		error.put("type", type);
		error.putNull("param");
		if (code != null) {
			error.put("code", code);
		}
		else {
			error.putNull("code");
		}
		return body;
	}

}
