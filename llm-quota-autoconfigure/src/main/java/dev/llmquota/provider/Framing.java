package dev.llmquota.provider;

/**
 * How a response body carries its events.
 */
public enum Framing {

	/** One JSON document. */
	JSON,

	/** Server-sent events: {@code data:} lines, each one JSON document. */
	SSE,

	/** One JSON document per line. */
	NDJSON,

	/**
	 * A format llm-quota does not read (AWS binary event streams); no usage is taken from
	 * it.
	 */
	OPAQUE

}
