package dev.llmquota.provider;

import java.util.List;

/**
 * Where a dialect's requests carry what the provider counts as input: the top-level
 * fields holding messages and prompts, those holding tool definitions and schemas, and
 * the arrays whose elements are messages.
 *
 * @param textFields top-level fields holding messages and prompts
 * @param structureFields top-level fields holding tool definitions and schemas
 * @param messageFields top-level fields whose elements (or value) are messages
 */
public record RequestShape(List<String> textFields, List<String> structureFields, List<String> messageFields) {

	/**
	 * Returns whether a top-level field's value is read as it is parsed, never kept as a
	 * tree: a field of text or messages.
	 * @param field the field
	 * @return whether it is
	 */
	boolean streamed(String field) {
		return this.textFields.contains(field) || this.messageFields.contains(field);
	}

}
