package dev.llmquota.client;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How a test calls each dialect the simulator serves: the path and body a real client
 * sends.
 */
enum DialectCase {

	OPENAI("openai", true, true), AZURE_OPENAI("azure-openai", true, true), ANTHROPIC("anthropic", true, true),
	BEDROCK("bedrock", false, false), GEMINI("gemini", false, true), OLLAMA("ollama", false, true);

	private final String dialect;

	private final boolean headers;

	private final boolean streams;

	DialectCase(String dialect, boolean headers, boolean streams) {
		this.dialect = dialect;
		this.headers = headers;
		this.streams = streams;
	}

	String dialect() {
		return this.dialect;
	}

	/** Whether the provider reports rate-limit headers. */
	boolean reportsHeaders() {
		return this.headers;
	}

	/**
	 * Whether the simulator serves this dialect's streams in a format llm-quota reads.
	 */
	boolean streams() {
		return this.streams;
	}

	/**
	 * Whether a line of a stream (or an event's data, as a {@code WebClient} decodes it)
	 * carries the simulator's last event of this dialect's streams.
	 */
	boolean lastEvent(String text) {
		return switch (this) {
			case ANTHROPIC -> text.contains("\"message_stop\"");
			case OLLAMA -> text.contains("\"done\":true");
			default -> text.endsWith("[DONE]");
		};
	}

	String path(String model, boolean stream) {
		return switch (this) {
			case OPENAI -> "/v1/chat/completions";
			case AZURE_OPENAI -> "/openai/deployments/" + model + "/chat/completions?api-version=2024-10-21";
			case ANTHROPIC -> "/v1/messages";
			case BEDROCK -> "/model/" + URLEncoder.encode(model, StandardCharsets.UTF_8) + "/converse";
			case GEMINI -> "/v1beta/models/" + model + (stream ? ":streamGenerateContent?alt=sse" : ":generateContent");
			case OLLAMA -> "/api/chat";
		};
	}

	Map<String, Object> body(String model, int maxTokens, boolean stream, String prompt) {
		Map<String, Object> body = new LinkedHashMap<>();
		switch (this) {
			case OPENAI, AZURE_OPENAI -> {
				if (this == OPENAI) {
					body.put("model", model);
				}
				body.put("max_tokens", maxTokens);
				body.put("messages", List.of(Map.of("role", "user", "content", prompt)));
				if (stream) {
					body.put("stream", true);
					body.put("stream_options", Map.of("include_usage", true));
				}
			}
			case ANTHROPIC -> {
				body.put("model", model);
				body.put("max_tokens", maxTokens);
				body.put("messages", List.of(Map.of("role", "user", "content", prompt)));
				body.put("stream", stream);
			}
			case BEDROCK -> {
				body.put("messages", List.of(Map.of("role", "user", "content", List.of(Map.of("text", prompt)))));
				body.put("inferenceConfig", Map.of("maxTokens", maxTokens));
			}
			case GEMINI -> {
				body.put("contents", List.of(Map.of("role", "user", "parts", List.of(Map.of("text", prompt)))));
				body.put("generationConfig", Map.of("maxOutputTokens", maxTokens));
			}
			case OLLAMA -> {
				body.put("model", model);
				body.put("messages", List.of(Map.of("role", "user", "content", prompt)));
				body.put("options", Map.of("num_predict", maxTokens));
				body.put("stream", stream);
			}
		}
		return body;
	}

}
