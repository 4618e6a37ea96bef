package dev.llmquota.provider;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Reads usage from an answer's bytes as they pass, without holding the caller's buffers:
 * a JSON body is parsed as it comes, up to a bound, keeping only the fields the dialect
 * reads, and read at its end; a text stream is read line by line; AWS's binary event
 * stream message by message. Unreadable content is logged once and skipped; the answer
 * itself is never touched.
 */
public final class ResponseReader {

	/**
	 * A JSON answer larger than this is not read for usage (its reservation then stands).
	 */
	static final int MAX_BODY_BYTES = 16 * 1024 * 1024;

	/** A stream line longer than this is skipped. */
	static final int MAX_LINE_BYTES = 4 * 1024 * 1024;

	/** The data of the event that ends an OpenAI-style stream. */
	private static final byte[] DONE = "[DONE]".getBytes(StandardCharsets.US_ASCII);

	private final Dialect dialect;

	private final Framing framing;

	private final UsageAccumulator usage = new UsageAccumulator();

	/** The line being read, of a text stream; {@code null} for other framings. */
	private final ByteArrayOutputStream pending;

	private boolean overflow;

	/** Reads a JSON answer as it passes; {@code null} for other framings. */
	private final JsonAnswerReader body;

	/** The bytes of a JSON answer read so far. */
	private long bodyBytes;

	/** Reads a binary event stream; {@code null} for other framings. */
	private final EventStreamDecoder events;

	/** Whether a part of the answer could not be read. */
	private boolean partUnread;

	/** The answer's content coding, other than identity; {@code null} for none. */
	private String encoding;

	/**
	 * Whether the answer arrived compressed, once its first byte told; {@code null}
	 * before.
	 */
	private Boolean compressed;

	/**
	 * Creates a reader.
	 * @param dialect the provider's dialect
	 * @param framing how the answer is framed
	 */
	public ResponseReader(Dialect dialect, Framing framing) {
		this.dialect = dialect;
		this.framing = framing;
		this.events = (framing == Framing.EVENT_STREAM) ? new EventStreamDecoder(this::event) : null;
		this.body = (framing == Framing.JSON) ? new JsonAnswerReader(dialect.bodyFields()) : null;
		this.pending = (this.events == null && this.body == null) ? new ByteArrayOutputStream() : null;
	}

	/**
	 * Returns how the answer is read.
	 * @return the framing
	 */
	public Framing framing() {
		return this.framing;
	}

	/**
	 * Reads the next bytes of the answer.
	 * @param bytes the bytes; their position is not changed
	 */
	public synchronized void feed(ByteBuffer bytes) {
		if (this.encoding != null && stillCompressed(bytes)) {
			return;
		}
		if (this.events != null) {
			this.events.feed(bytes);
			return;
		}
		ByteBuffer view = bytes.duplicate();
		if (this.body != null) {
			this.bodyBytes += view.remaining();
			if (this.bodyBytes > MAX_BODY_BYTES) {
				this.overflow = true;
			}
			else {
				this.body.feed(view);
				if (this.body.ended()) {
					// its last byte passed: answered in full, whether or not its reader
					// goes on to the connection's end
					this.usage.end();
				}
			}
			return;
		}
		while (view.hasRemaining()) {
			byte next = view.get();
			if (next == '\n') {
				line();
			}
			else if (!this.overflow) {
				if (this.pending.size() >= MAX_LINE_BYTES) {
					this.overflow = true;
				}
				else {
					this.pending.write(next);
				}
			}
		}
	}

	/**
	 * Notes the answer's {@code Content-Encoding}. An answer that reaches llm-quota still
	 * compressed (a caller that asked for it below a client that decompresses nothing) is
	 * not read, and its reservation stands; one its HTTP client decompressed, keeping the
	 * header, is read as usual (a gzip stream starts with its magic byte, 0x1f; any other
	 * coding is taken as compressed).
	 * @param contentEncoding the header's value, or {@code null}
	 */
	public synchronized void encoded(String contentEncoding) {
		String coding = (contentEncoding != null) ? contentEncoding.trim().toLowerCase(Locale.ROOT) : "";
		this.encoding = (coding.isEmpty() || coding.equals("identity")) ? null : coding;
	}

	private boolean stillCompressed(ByteBuffer bytes) {
		if (this.compressed == null && bytes.hasRemaining()) {
			boolean gzip = this.encoding.equals("gzip") || this.encoding.equals("x-gzip");
			this.compressed = !gzip || bytes.get(bytes.position()) == 0x1f;
		}
		return Boolean.TRUE.equals(this.compressed);
	}

	/**
	 * Reads what is left at the end of the answer.
	 */
	public synchronized void finish() {
		if (Boolean.TRUE.equals(this.compressed)) {
			this.partUnread = true;
			LogOnce.warn(this.dialect.id().id() + ": compressed answer", "A " + this.dialect.id().id()
					+ " answer reached llm-quota still compressed (Content-Encoding: " + this.encoding
					+ "): its usage cannot be read and its reservation stands. Let the HTTP client ask for and"
					+ " decompress compressed answers itself rather than setting Accept-Encoding on the request");
			return;
		}
		if (this.body != null) {
			if (this.overflow) {
				this.partUnread = true;
				LogOnce.warn(this.dialect.id().id() + ": large body", "llm-quota did not read usage from a "
						+ this.dialect.id().id() + " answer larger than 16 MiB; its reservation stands");
				return;
			}
			JsonNode read;
			try {
				read = this.body.finish();
			}
			catch (JsonAnswerReader.Unreadable ex) {
				unreadable(ex.getMessage());
				return;
			}
			if (read != null && read.isArray()) {
				// a stream sent as one JSON array (Gemini without alt=sse)
				read.values().forEach((element) -> read(element, true));
			}
			else if (read != null) {
				read(read, false);
			}
		}
		else if (this.events != null) {
			if (this.events.broken() != null) {
				this.partUnread = true;
				LogOnce.warn(this.dialect.id().id() + ": unreadable event stream",
						"llm-quota could not read a " + this.dialect.id().id() + " event stream ("
								+ this.events.broken() + "); it keeps the reservation");
			}
		}
		else {
			line();
		}
	}

	/**
	 * One message of a binary event stream: an event, keyed by its type, or an exception.
	 */
	private void event(EventStreamDecoder.Message message) {
		String type = message.headers().get(":message-type");
		String eventType = message.headers().get(":event-type");
		if (!"event".equals(type) || eventType == null) {
			LogOnce.warn(
					this.dialect.id().id() + ": stream " + type + " "
							+ message.headers().getOrDefault(":exception-type", message.headers().get(":error-code")),
					"A " + this.dialect.id().id() + " stream carried an " + type + " (" + message.headers()
						.getOrDefault(":exception-type", message.headers().getOrDefault(":error-code", "unknown"))
							+ "); usage it did not report stays reserved");
			return;
		}
		JsonNode payload = parse(message.payload(), 0, message.payload().length);
		if (payload != null) {
			read(JsonTrees.nodes.objectNode().set(eventType, payload), true);
		}
	}

	/**
	 * Parses JSON quietly: an answer's part that is not JSON is logged once and read as
	 * nothing.
	 * @param bytes the bytes
	 * @return the JSON, or {@code null}
	 */
	static JsonNode json(byte[] bytes) {
		try {
			return JsonTrees.read(bytes, 0, bytes.length);
		}
		catch (JacksonException ex) {
			LogOnce.warn("unreadable embedded event",
					"llm-quota could not read an event inside a stream (" + ex.getOriginalMessage() + ")");
			return null;
		}
	}

	/**
	 * Returns whether a part of the answer could not be read: a stream's line or event
	 * that is not JSON or is over the size bound, a JSON answer that is broken or over 16
	 * MiB, usage in a shape its dialect could not read or with a count no call reaches.
	 * Output counted from what was read then says nothing of what was generated.
	 * @return whether a part went unread
	 */
	public synchronized boolean partUnread() {
		return this.partUnread || this.usage.implausible();
	}

	/**
	 * Returns what the answer said about usage so far.
	 * @return the usage read
	 */
	public synchronized UsageAccumulator usage() {
		return this.usage;
	}

	private void line() {
		byte[] bytes = this.pending.toByteArray();
		boolean skipped = this.overflow;
		this.pending.reset();
		this.overflow = false;
		if (skipped) {
			this.partUnread = true;
			return;
		}
		int start = 0;
		int end = bytes.length;
		if (end > 0 && bytes[end - 1] == '\r') {
			end--;
		}
		if (this.framing == Framing.SSE) {
			String prefix = new String(bytes, 0, Math.min(5, end), StandardCharsets.US_ASCII);
			if (!prefix.equals("data:")) {
				return;
			}
			start = 5;
		}
		while (start < end && (bytes[start] == ' ' || bytes[start] == '\t')) {
			start++;
		}
		if (start >= end || bytes[start] != '{') {
			// blank lines, comments; an OpenAI-style stream's end
			if (this.framing == Framing.SSE && end - start == DONE.length
					&& Arrays.equals(bytes, start, end, DONE, 0, DONE.length)) {
				this.usage.end();
			}
			return;
		}
		JsonNode event = parse(bytes, start, end - start);
		if (event != null) {
			read(event, true);
		}
	}

	private void read(JsonNode node, boolean event) {
		try {
			if (event) {
				this.dialect.readEvent(node, this.usage);
			}
			else {
				this.dialect.readBody(node, this.usage);
			}
		}
		catch (RuntimeException ex) {
			this.partUnread = true;
			LogOnce.warn(this.dialect.id().id() + ": unexpected usage", "llm-quota could not read usage from a "
					+ this.dialect.id().id() + " answer (" + ex.getMessage() + "); it keeps the reservation");
		}
	}

	private JsonNode parse(byte[] bytes, int offset, int length) {
		try {
			return JsonTrees.read(bytes, offset, length);
		}
		catch (JacksonException ex) {
			unreadable(ex.getOriginalMessage());
			return null;
		}
	}

	private void unreadable(String why) {
		this.partUnread = true;
		LogOnce.warn(this.dialect.id().id() + ": unreadable answer", "llm-quota could not read usage from a "
				+ this.dialect.id().id() + " answer (" + why + "); it keeps the reservation");
	}

}
