package dev.llmquota.provider;

import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.exc.StreamReadException;
import tools.jackson.databind.node.ObjectNode;

/**
 * What llm-quota reads of a request body, in one pass of a parser over its bytes: the
 * fields of text and messages become the input text as they pass, never a tree; the
 * others (the model, the output ceiling, the stream flag, tools and schemas) are kept as
 * a tree the dialect reads them from.
 *
 * @param fields the request's fields but those of text and messages
 * @param input the input text
 */
public record ParsedRequest(ObjectNode fields, InputText input) {

	/**
	 * Reads a request body for a dialect.
	 * @param body the body
	 * @param dialect the dialect
	 * @return what it says, or {@code null} for a body that is not a JSON object
	 * @throws JacksonException when the body is not well-formed JSON
	 */
	public static ParsedRequest read(byte[] body, Dialect dialect) {
		RequestShape shape = dialect.requestShape();
		try (JsonParser parser = JsonTrees.parser(body)) {
			if (parser.nextToken() != JsonToken.START_OBJECT) {
				return null;
			}
			ObjectNode fields = JsonTrees.nodes.objectNode();
			InputText.Collector input = new InputText.Collector(shape);
			while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
				String name = parser.currentName();
				parser.nextToken();
				if (shape.streamed(name)) {
					input.field(name, parser);
				}
				else {
					fields.set(name, JsonTrees.value(parser));
				}
			}
			if (parser.nextToken() != null) {
				throw new StreamReadException(parser, "more content follows the request's JSON object");
			}
			return new ParsedRequest(fields, input.input(fields));
		}
	}

	/**
	 * Returns the request as it names another model: its fields with that model, the same
	 * input.
	 * @param model the model
	 * @return the request
	 */
	public ParsedRequest withModel(String model) {
		ObjectNode copy = this.fields.deepCopy();
		copy.put("model", model);
		return new ParsedRequest(copy, this.input);
	}

}
