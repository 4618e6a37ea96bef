package dev.llmquota.provider;

import dev.llmquota.core.kernel.Arith;
import tools.jackson.databind.JsonNode;

/**
 * Small readers over Jackson trees that never throw on unexpected shapes.
 */
final class Json {

	private Json() {
	}

	/** Returns the node at the path, or a missing node. */
	static JsonNode at(JsonNode node, String... path) {
		JsonNode current = node;
		for (String name : path) {
			if (current == null || !current.isObject()) {
				return null;
			}
			current = current.get(name);
		}
		return current;
	}

	/** Returns a non-negative integer at the path, or {@code null}. */
	static Long count(JsonNode node, String... path) {
		JsonNode value = at(node, path);
		if (value == null || !value.isNumber() || !value.canConvertToLong()) {
			return null;
		}
		long count = value.asLong();
		return (count >= 0) ? count : null;
	}

	/**
	 * Returns how many choices the largest of the counts present asks for: 1 when none
	 * is, at most {@link Dialect#MOST_CHOICES}.
	 */
	static int choices(Long... counts) {
		Long most = max(counts);
		return (most == null || most < 1) ? 1 : (int) Math.min(most, Dialect.MOST_CHOICES);
	}

	/**
	 * Returns a boolean at the path, or the default when it is absent or not a boolean.
	 */
	static boolean flag(JsonNode node, String name, boolean otherwise) {
		JsonNode value = at(node, name);
		return (value != null && value.isBoolean()) ? value.asBoolean() : otherwise;
	}

	/** Returns a text at the path, or {@code null}. */
	static String text(JsonNode node, String... path) {
		JsonNode value = at(node, path);
		return (value != null && value.isString()) ? value.asString() : null;
	}

	/**
	 * Returns the sum of the counts that are present, or {@code null} if none is; a sum
	 * past what a long holds is the largest long, never a wrapped negative.
	 */
	static Long sum(Long... counts) {
		Long sum = null;
		for (Long count : counts) {
			if (count != null) {
				sum = Arith.saturatedAdd((sum != null) ? sum : 0L, count);
			}
		}
		return sum;
	}

	/** Returns the larger of the counts that are present, or {@code null} if none is. */
	static Long max(Long... counts) {
		Long max = null;
		for (Long count : counts) {
			if (count != null && (max == null || count > max)) {
				max = count;
			}
		}
		return max;
	}

}
