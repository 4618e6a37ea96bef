package dev.llmquota.provider;

import dev.llmquota.core.kernel.Arith;
import tools.jackson.databind.JsonNode;

/**
 * Small readers over Jackson trees that never throw on unexpected shapes.
 */
final class Json {

	private Json() {
	}

	/** Returns the field of an object, or {@code null}. */
	static JsonNode at(JsonNode node, String name) {
		return (node != null && node.isObject()) ? node.get(name) : null;
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

	/** Returns a non-negative integer in a field, or {@code null}. */
	static Long count(JsonNode node, String name) {
		return count(at(node, name));
	}

	/** Returns a non-negative integer at the path, or {@code null}. */
	static Long count(JsonNode node, String... path) {
		return count(at(node, path));
	}

	/** Returns a non-negative integer, or {@code null}. */
	static Long count(JsonNode value) {
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
	static int choices(Long one, Long other) {
		Long most = max(one, other);
		return (most == null || most < 1) ? 1 : (int) Math.min(most, Dialect.MOST_CHOICES);
	}

	/**
	 * Returns a boolean at the path, or the default when it is absent or not a boolean.
	 */
	static boolean flag(JsonNode node, String name, boolean otherwise) {
		JsonNode value = at(node, name);
		return (value != null && value.isBoolean()) ? value.asBoolean() : otherwise;
	}

	/** Returns a text in a field, or {@code null}. */
	static String text(JsonNode node, String name) {
		return text(at(node, name));
	}

	/** Returns a text at the path, or {@code null}. */
	static String text(JsonNode node, String... path) {
		return text(at(node, path));
	}

	private static String text(JsonNode value) {
		return (value != null && value.isString()) ? value.asString() : null;
	}

	/**
	 * Returns the sum of the counts that are present, or {@code null} if none is; a sum
	 * past what a long holds is the largest long, never a wrapped negative. Fixed
	 * arities, not varargs: these run on every answer.
	 */
	static Long sum(Long one, Long other) {
		if (one == null || other == null) {
			return (one != null) ? one : other;
		}
		return Arith.saturatedAdd(one, other);
	}

	/** Returns the sum of three counts as {@link #sum(Long, Long)} does. */
	static Long sum(Long one, Long two, Long three) {
		return sum(sum(one, two), three);
	}

	/** Returns the larger of the counts that are present, or {@code null} if none is. */
	static Long max(Long one, Long other) {
		if (one == null || other == null) {
			return (one != null) ? one : other;
		}
		return (other > one) ? other : one;
	}

	/** Returns the largest of three counts as {@link #max(Long, Long)} does. */
	static Long max(Long one, Long two, Long three) {
		return max(max(one, two), three);
	}

}
