package dev.llmquota.test.simulator.dialect;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The JSON mapper all dialects share, and small reading helpers.
 */
public final class Json {

	/** The shared mapper. */
	public static final JsonMapper MAPPER = JsonMapper.builder().build();

	private Json() {
	}

	/**
	 * A new empty object.
	 * @return the object
	 */
	public static ObjectNode object() {
		return MAPPER.createObjectNode();
	}

	/**
	 * Serialises a node.
	 * @param node the node
	 * @return compact JSON
	 */
	public static String write(JsonNode node) {
		return MAPPER.writeValueAsString(node);
	}

	/**
	 * A required non-blank string property.
	 * @param body the object
	 * @param name the property
	 * @return the value
	 */
	static String requiredString(JsonNode body, String name) {
		JsonNode value = body.get(name);
		if (value == null || !value.isString() || value.stringValue().isBlank()) {
			throw new BadRequestException(name + ": field required");
		}
		return value.stringValue();
	}

	/**
	 * A non-negative integer property, or 0 when absent.
	 * @param node the object
	 * @param name the property
	 * @return the value or 0
	 */
	static long optionalCount(JsonNode node, String name) {
		JsonNode value = (node != null) ? node.get(name) : null;
		if (value == null || value.isNull()) {
			return 0;
		}
		if (!value.isIntegralNumber() || value.asLong() < 0) {
			throw new BadRequestException(name + ": must be a non-negative integer");
		}
		return value.asLong();
	}

	/**
	 * An output ceiling where zero and negative values mean "none given", or 0 when
	 * absent.
	 * @param node the object
	 * @param name the property
	 * @return the ceiling, or 0 for none
	 */
	static long optionalCeiling(JsonNode node, String name) {
		JsonNode value = (node != null) ? node.get(name) : null;
		if (value == null || value.isNull()) {
			return 0;
		}
		if (!value.isIntegralNumber()) {
			throw new BadRequestException(name + ": must be an integer");
		}
		return Math.max(0, value.asLong());
	}

	/**
	 * The text of a content field: a string, or an array of parts with {@code text}.
	 * @param content the content node
	 * @return all text found
	 */
	static String text(JsonNode content) {
		if (content == null || content.isNull()) {
			return "";
		}
		if (content.isString()) {
			return content.stringValue();
		}
		StringBuilder text = new StringBuilder();
		if (content.isArray()) {
			for (JsonNode part : content) {
				text.append(part.isString() ? part.stringValue() : text(part.get("text")));
			}
		}
		return text.toString();
	}

	/**
	 * The array property, which must be present and hold at least one element.
	 * @param body the object
	 * @param name the property
	 * @return the array
	 */
	static JsonNode requiredArray(JsonNode body, String name) {
		JsonNode value = body.get(name);
		if (value == null || !value.isArray() || value.isEmpty()) {
			throw new BadRequestException(name + ": at least one entry is required");
		}
		return value;
	}

}
