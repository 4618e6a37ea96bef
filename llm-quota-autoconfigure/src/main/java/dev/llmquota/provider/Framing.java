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
	 * AWS's binary event stream ({@code application/vnd.amazon.eventstream}): framed
	 * messages with headers and a JSON payload each.
	 */
	EVENT_STREAM

}
