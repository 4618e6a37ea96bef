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
 * @param counted tokens counted without a tokenizer: input given as token ids (one each),
 * and media (an image, a file, audio, given inline) at {@link #MEDIA_TOKENS} an item
 */
public record InputText(String text, int messages, String structure, long counted) {

	/**
	 * What a medium given inline is taken to count: an image as Anthropic counts its
	 * largest (about 1,600 tokens; OpenAI's and Gemini's count less). The estimate drift
	 * learns the rest from the provider's usage.
	 */
	public static final int MEDIA_TOKENS = 1_600;

	/**
	 * Values under these names are no input a provider counts: kinds, roles, ids, media
	 * types, and opaque signatures of earlier reasoning. Every other string counts,
	 * wherever it sits (a tool's result under "data" is input like any text).
	 */
	private static final List<String> SKIPPED = List.of("type", "role", "id", "model", "signature", "thoughtSignature",
			"thought_signature", "encrypted_content", "media_type", "mimeType", "mime_type");

	/**
	 * Values under these names refer to a medium by address or id (OpenAI's
	 * {@code image_url} and files, Gemini's {@code fileUri}): each counts as one medium,
	 * whatever it holds.
	 */
	private static final List<String> MEDIA_REFERENCES = List.of("image_url", "file_id", "file_url", "fileUri",
			"file_uri");

	/**
	 * Strings at least this long written in base64's alphabet alone are taken for media
	 * given inline; shorter ones are counted as text (never an under-estimate).
	 */
	private static final int MEDIA_LENGTH = 4_096;

	private static final InputText NONE = new InputText("", 0, "", 0);

	/**
	 * Input text without tokens counted apart.
	 * @param text the input text, joined
	 * @param messages the number of messages
	 * @param structure characters of tool and schema definitions
	 */
	public InputText(String text, int messages, String structure) {
		this(text, messages, structure, 0);
	}

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

		/** Tokens counted apart: ids given as input, media. */
		private final long[] counted = new long[1];

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
				int elements = elements(parser, text, this.counted);
				this.messages += counted ? elements : 0;
				return;
			}
			if (counted && token != JsonToken.VALUE_NULL) {
				this.messages++;
			}
			if (text != null) {
				collect(parser, text, this.counted);
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
		private static int elements(JsonParser parser, StringBuilder text, long[] counted) {
			int elements = 0;
			while (parser.nextToken() != JsonToken.END_ARRAY) {
				elements++;
				if (text != null) {
					collect(parser, text, counted);
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
			return new InputText(joined.toString(), this.messages, structure.toString(), this.counted[0]);
		}

	}

	/**
	 * Collects the text of the value the parser is at: its strings, but kinds, ids and
	 * media (counted apart, as are numbers: token ids given as input); leaves the parser
	 * at the value's last token.
	 */
	private static void collect(JsonParser parser, StringBuilder text, long[] counted) {
		JsonToken token = parser.currentToken();
		if (token == JsonToken.VALUE_STRING) {
			String value = parser.getString();
			if (media(value)) {
				counted[0] += MEDIA_TOKENS;
				return;
			}
			if (!text.isEmpty()) {
				text.append('\n');
			}
			text.append(value);
		}
		else if (token == JsonToken.VALUE_NUMBER_INT) {
			// a token id (an embedding's or a completion's input given as tokens), or a
			// number, which a tokenizer counts as about one token too
			counted[0]++;
		}
		else if (token == JsonToken.START_ARRAY) {
			while (parser.nextToken() != JsonToken.END_ARRAY) {
				collect(parser, text, counted);
			}
		}
		else if (token == JsonToken.START_OBJECT) {
			while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
				String name = parser.currentName();
				parser.nextToken();
				if (MEDIA_REFERENCES.contains(name)) {
					counted[0] += MEDIA_TOKENS;
					parser.skipChildren();
				}
				else if (SKIPPED.contains(name)) {
					parser.skipChildren();
				}
				else {
					collect(parser, text, counted);
				}
			}
		}
	}

	/**
	 * Whether a string is a medium given inline: a data URL, or a long run of base64's
	 * alphabet alone (compact JSON, Chinese or Japanese text are not).
	 */
	static boolean media(String value) {
		if (value.startsWith("data:") && value.indexOf(";base64,") > 0) {
			return true;
		}
		if (value.length() < MEDIA_LENGTH) {
			return false;
		}
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			boolean base64 = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+'
					|| c == '/' || c == '=' || c == '-' || c == '_' || c == '\n' || c == '\r';
			if (!base64) {
				return false;
			}
		}
		return true;
	}

}
