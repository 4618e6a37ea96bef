package dev.llmquota.provider;

import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.exc.StreamReadException;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * The parsers llm-quota reads each call's request, answer and stream events with, and the
 * trees it keeps of them, built straight from the parser's tokens: no object mapper's
 * context is made per parser (a parser made by the mapper carries one, and reading a tree
 * through it looks the tree's deserializer up). The nodes are those the mapper would
 * build.
 */
final class JsonTrees {

	private static final JsonFactory factory = JsonMapper.shared().tokenStreamFactory();

	static final JsonNodeFactory nodes = JsonNodeFactory.instance;

	private JsonTrees() {
	}

	/**
	 * Returns a parser over bytes.
	 * @param bytes the JSON
	 * @return the parser, at no token yet
	 */
	static JsonParser parser(byte[] bytes) {
		return factory.createParser(ObjectReadContext.empty(), bytes);
	}

	/**
	 * Reads one whole JSON document, as the mapper's {@code readTree} does.
	 * @param bytes the bytes
	 * @param offset where the document starts
	 * @param length its length
	 * @return the document, or {@code null} for no content
	 * @throws JacksonException when it is not one well-formed JSON document
	 */
	static JsonNode read(byte[] bytes, int offset, int length) {
		try (JsonParser parser = factory.createParser(ObjectReadContext.empty(), bytes, offset, length)) {
			JsonToken token = parser.nextToken();
			if (token == null) {
				return null;
			}
			JsonNode value = value(parser);
			if (parser.nextToken() != null) {
				throw new StreamReadException(parser, "more content follows the JSON document");
			}
			return value;
		}
	}

	/**
	 * Reads the value at the parser's current token, whole, and leaves the parser at its
	 * last token. Nesting is bounded by the parser's own read constraints.
	 * @param parser the parser
	 * @return the value
	 */
	static JsonNode value(JsonParser parser) {
		JsonToken token = parser.currentToken();
		if (token == JsonToken.START_OBJECT) {
			ObjectNode object = nodes.objectNode();
			while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
				String name = parser.currentName();
				parser.nextToken();
				object.set(name, value(parser));
			}
			return object;
		}
		if (token == JsonToken.START_ARRAY) {
			ArrayNode array = nodes.arrayNode();
			while (parser.nextToken() != JsonToken.END_ARRAY) {
				array.add(value(parser));
			}
			return array;
		}
		return scalar(parser, token);
	}

	/**
	 * Returns a scalar token's value as the mapper reads it (an {@code int} where it
	 * fits, a {@code double} for a fraction).
	 * @param parser the parser at the token
	 * @param token the token
	 * @return the value
	 */
	static JsonNode scalar(JsonParser parser, JsonToken token) {
		return switch (token) {
			case VALUE_STRING -> nodes.stringNode(parser.getString());
			case VALUE_NUMBER_INT -> switch (parser.getNumberType()) {
				case INT -> nodes.numberNode(parser.getIntValue());
				case LONG -> nodes.numberNode(parser.getLongValue());
				default -> nodes.numberNode(parser.getBigIntegerValue());
			};
			case VALUE_NUMBER_FLOAT -> nodes.numberNode(parser.getDoubleValue());
			case VALUE_TRUE -> nodes.booleanNode(true);
			case VALUE_FALSE -> nodes.booleanNode(false);
			default -> nodes.nullNode();
		};
	}

}
