package dev.llmquota.client;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

import dev.llmquota.provider.Answer;
import dev.llmquota.provider.Dialect;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The start of a stream that may refuse its call after a 200, read before any of it
 * reaches the caller: events that say nothing yet ({@code response.created}) are passed
 * over until the first that does, which is either a refusal (then the call is retried
 * like a 429, and the caller never sees this attempt) or the stream's real start.
 * Everything read is kept, to be handed on unchanged when the stream goes to the caller.
 */
public final class StreamHead {

	/** A head this long without a telling event is handed on as it is. */
	static final int MAX_HEAD_BYTES = 64 * 1024;

	private static final JsonMapper mapper = JsonMapper.shared();

	private final Dialect dialect;

	private final Instant now;

	private final ByteArrayOutputStream held = new ByteArrayOutputStream();

	private final ByteArrayOutputStream line = new ByteArrayOutputStream();

	private boolean decided;

	private Answer refusal;

	StreamHead(Dialect dialect, Instant now) {
		this.dialect = dialect;
		this.now = now;
	}

	/**
	 * Reads the next bytes of the stream, keeping them.
	 * @param bytes the bytes; their position is not changed
	 * @return whether the head is complete: a telling event, or too much without one
	 */
	public boolean feed(ByteBuffer bytes) {
		ByteBuffer view = bytes.duplicate();
		while (!this.decided && view.hasRemaining()) {
			byte next = view.get();
			this.held.write(next);
			if (next == '\n') {
				event(this.line.toByteArray());
				this.line.reset();
			}
			else {
				this.line.write(next);
			}
			if (this.held.size() >= MAX_HEAD_BYTES) {
				this.decided = true;
			}
		}
		// bytes past the telling event belong to the stream's body, kept for the caller
		if (view.hasRemaining()) {
			byte[] rest = new byte[view.remaining()];
			view.get(rest);
			this.held.write(rest, 0, rest.length);
		}
		return this.decided;
	}

	/** A stream that ended before a telling event: it is handed on as it is. */
	public void end() {
		this.decided = true;
	}

	public boolean decided() {
		return this.decided;
	}

	/**
	 * Returns the refusal the stream began with, or {@code null} when it began otherwise.
	 * @return the refusal, or {@code null}
	 */
	public Answer refusal() {
		return this.refusal;
	}

	/**
	 * Returns every byte read.
	 * @return the head
	 */
	public byte[] bytes() {
		return this.held.toByteArray();
	}

	private void event(byte[] text) {
		String value = new String(text, StandardCharsets.UTF_8).trim();
		if (!value.startsWith("data:")) {
			return;
		}
		JsonNode event;
		try {
			event = mapper.readTree(value.substring(5).trim());
		}
		catch (JacksonException ex) {
			// not a JSON event ([DONE], or garbage): it tells nothing
			return;
		}
		if (event == null || !event.isObject() || this.dialect.preamble(event)) {
			return;
		}
		this.decided = true;
		this.refusal = this.dialect.refusal(event, this.now);
	}

	/**
	 * Reads a blocking stream into this head until it decides, and returns a stream that
	 * yields every byte again: the head's, then the rest.
	 * @param in the stream
	 * @return the stream to read from now on
	 * @throws IOException if the stream cannot be read
	 */
	public InputStream readFrom(InputStream in) throws IOException {
		byte[] chunk = new byte[8192];
		while (!decided()) {
			int count = in.read(chunk);
			if (count < 0) {
				end();
			}
			else {
				feed(ByteBuffer.wrap(chunk, 0, count));
			}
		}
		return new SequenceInputStream(new ByteArrayInputStream(bytes()), in);
	}

}
