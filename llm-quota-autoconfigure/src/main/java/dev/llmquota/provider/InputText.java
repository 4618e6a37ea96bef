package dev.llmquota.provider;

import java.util.List;
import java.util.Map;

import tools.jackson.databind.JsonNode;

/**
 * The text of a request that the provider counts as input, and how many messages carry
 * it.
 *
 * @param text the input text, joined
 * @param messages the number of messages (and system prompts), for per-message overhead
 * @param structure characters of tool and schema definitions, counted as input too
 */
public record InputText(String text, int messages, String structure) {

	/** Values under these names are media or ids, not text a tokenizer counts. */
	private static final List<String> SKIPPED = List.of("data", "bytes", "b64_json", "image_url", "inlineData",
			"inline_data", "fileData", "file_data", "image", "images", "source", "id", "type", "role", "name", "model");

	/** Strings longer than this without a space are taken for base64 media. */
	private static final int MEDIA_LENGTH = 4_096;

	/**
	 * Collects the input text of a request body.
	 * @param body the request body
	 * @param textFields top-level fields holding messages and prompts
	 * @param structureFields top-level fields holding tool definitions and schemas
	 * @param messageFields top-level arrays whose elements are messages
	 * @return the input text
	 */
	static InputText of(JsonNode body, List<String> textFields, List<String> structureFields,
			List<String> messageFields) {
		if (body == null || !body.isObject()) {
			return new InputText("", 0, "");
		}
		StringBuilder text = new StringBuilder();
		for (String field : textFields) {
			collect(body.get(field), text);
		}
		StringBuilder structure = new StringBuilder();
		for (String field : structureFields) {
			JsonNode node = body.get(field);
			if (node != null && !node.isNull()) {
				structure.append(node.toString());
			}
		}
		int messages = 0;
		for (String field : messageFields) {
			JsonNode node = body.get(field);
			if (node != null && node.isArray()) {
				messages += node.size();
			}
			else if (node != null && !node.isNull()) {
				messages++;
			}
		}
		return new InputText(text.toString(), messages, structure.toString());
	}

	private static void collect(JsonNode node, StringBuilder text) {
		if (node == null || node.isNull()) {
			return;
		}
		if (node.isString()) {
			String value = node.asString();
			if (value.length() < MEDIA_LENGTH || value.indexOf(' ') >= 0) {
				if (!text.isEmpty()) {
					text.append('\n');
				}
				text.append(value);
			}
			return;
		}
		if (node.isArray()) {
			node.values().forEach((element) -> collect(element, text));
			return;
		}
		if (node.isObject()) {
			for (Map.Entry<String, JsonNode> property : node.properties()) {
				if (!SKIPPED.contains(property.getKey())) {
					collect(property.getValue(), text);
				}
			}
		}
	}

}
