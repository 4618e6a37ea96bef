package dev.llmquota.provider;

import java.util.List;

import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
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

	private static final InputText NONE = new InputText("", 0, "");

	/**
	 * Collects the input text of a request body already parsed.
	 * @param body the request body
	 * @param shape where the dialect's requests carry their input
	 * @return the input text
	 */
	static InputText of(JsonNode body, RequestShape shape) {
		if (body == null || !body.isObject()) {
			return NONE;
		}
		Collector collector = new Collector(shape);
		for (String field : shape.textFields()) {
			JsonNode node = body.get(field);
			if (node != null) {
				try (JsonParser parser = node.traverse(ObjectReadContext.empty())) {
					parser.nextToken();
					collector.field(field, parser);
				}
			}
		}
		for (String field : shape.messageFields()) {
			JsonNode node = body.get(field);
			if (node != null && !shape.textFields().contains(field)) {
				collector.count(node.isArray() ? node.size() : node.isNull() ? 0 : 1);
			}
		}
		return collector.input(body);
	}

	/**
	 * The input text of a request as its parser passes it: the fields of text and
	 * messages are read token by token, their strings joined and their messages counted,
	 * and never kept as a tree; the structure fields come from the tree of the rest.
	 */
	static final class Collector {

		private final RequestShape shape;

		/** Each text field's strings, joined, in the shape's order. */
		private final StringBuilder[] texts;

		private int messages;

		Collector(RequestShape shape) {
			this.shape = shape;
			this.texts = new StringBuilder[shape.textFields().size()];
		}

		/**
		 * Reads a top-level field of text or messages, the parser at its value's first
		 * token; leaves the parser at its last.
		 */
		void field(String field, JsonParser parser) {
			int index = this.shape.textFields().indexOf(field);
			StringBuilder text = null;
			if (index >= 0) {
				text = (this.texts[index] != null) ? this.texts[index] : new StringBuilder();
				this.texts[index] = text;
			}
			boolean counted = this.shape.messageFields().contains(field);
			JsonToken token = parser.currentToken();
			if (token == JsonToken.START_ARRAY) {
				int elements = elements(parser, text);
				this.messages += counted ? elements : 0;
				return;
			}
			if (counted && token != JsonToken.VALUE_NULL) {
				this.messages++;
			}
			if (text != null) {
				collect(parser, text);
			}
			else {
				parser.skipChildren();
			}
		}

		/** Counts messages of a field read from a tree. */
		void count(int messages) {
			this.messages += messages;
		}

		/** Collects each element of an array and returns how many there were. */
		private static int elements(JsonParser parser, StringBuilder text) {
			int elements = 0;
			while (parser.nextToken() != JsonToken.END_ARRAY) {
				elements++;
				if (text != null) {
					collect(parser, text);
				}
				else {
					parser.skipChildren();
				}
			}
			return elements;
		}

		/**
		 * The input text the fields read so far hold, with the structure fields of a tree
		 * (the request's other fields).
		 */
		InputText input(JsonNode rest) {
			StringBuilder joined = new StringBuilder();
			for (StringBuilder text : this.texts) {
				if (text != null && !text.isEmpty()) {
					joined.append(joined.isEmpty() ? "" : "\n").append(text);
				}
			}
			StringBuilder structure = new StringBuilder();
			for (String field : this.shape.structureFields()) {
				JsonNode node = (rest != null) ? rest.get(field) : null;
				if (node != null && !node.isNull()) {
					structure.append(node.toString());
				}
			}
			return new InputText(joined.toString(), this.messages, structure.toString());
		}

	}

	/**
	 * Collects the text of the value the parser is at: its strings, but media and ids;
	 * leaves the parser at the value's last token.
	 */
	private static void collect(JsonParser parser, StringBuilder text) {
		JsonToken token = parser.currentToken();
		if (token == JsonToken.VALUE_STRING) {
			String value = parser.getString();
			if (value.length() < MEDIA_LENGTH || value.indexOf(' ') >= 0) {
				if (!text.isEmpty()) {
					text.append('\n');
				}
				text.append(value);
			}
		}
		else if (token == JsonToken.START_ARRAY) {
			while (parser.nextToken() != JsonToken.END_ARRAY) {
				collect(parser, text);
			}
		}
		else if (token == JsonToken.START_OBJECT) {
			while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
				String name = parser.currentName();
				parser.nextToken();
				if (SKIPPED.contains(name)) {
					parser.skipChildren();
				}
				else {
					collect(parser, text);
				}
			}
		}
	}

}
