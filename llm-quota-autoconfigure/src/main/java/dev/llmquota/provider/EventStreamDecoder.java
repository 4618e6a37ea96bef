package dev.llmquota.provider;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;
import java.util.zip.CRC32;

/**
 * Reads AWS's binary event-stream framing ({@code application/vnd.amazon.eventstream},
 * Bedrock's ConverseStream and InvokeModelWithResponseStream) as bytes pass: each message
 * is a prelude (total length, headers length, prelude CRC32), headers, a payload, and a
 * CRC32 of everything before it, all big-endian. A message whose checksums do not match,
 * or framing that makes no sense, stops the decoding: what follows cannot be trusted.
 */
final class EventStreamDecoder {

	/** A message larger than this (AWS allows payloads up to 24 MiB) is not read. */
	static final int MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

	private static final int PRELUDE = 12;

	/** The smallest message: prelude and message CRC, no headers or payload. */
	private static final int MIN_MESSAGE = PRELUDE + 4;

	/**
	 * One decoded message.
	 *
	 * @param headers its string headers, by name ({@code :event-type},
	 * {@code :message-type}, {@code :exception-type}); headers of other types are left
	 * out
	 * @param payload its payload
	 */
	record Message(Map<String, String> headers, byte[] payload) {

	}

	private final Consumer<Message> messages;

	private byte[] pending = new byte[0];

	private int pendingLength;

	private String broken;

	EventStreamDecoder(Consumer<Message> messages) {
		this.messages = messages;
	}

	/**
	 * Returns why decoding stopped, or {@code null} while the stream reads well.
	 * @return the reason, or {@code null}
	 */
	String broken() {
		return this.broken;
	}

	/**
	 * Reads the next bytes; every message they complete is handed on.
	 * @param bytes the bytes; their position is not changed
	 */
	void feed(ByteBuffer bytes) {
		if (this.broken != null) {
			return;
		}
		ByteBuffer view = bytes.duplicate();
		append(view);
		int offset = 0;
		while (this.broken == null && this.pendingLength - offset >= PRELUDE) {
			int total = readInt(this.pending, offset);
			int headers = readInt(this.pending, offset + 4);
			if (total < MIN_MESSAGE || total > MAX_MESSAGE_BYTES || headers < 0 || headers > total - MIN_MESSAGE) {
				this.broken = "a message announces " + total + " bytes with " + headers + " of headers";
				break;
			}
			if (crc(this.pending, offset, 8) != (readInt(this.pending, offset + 8) & 0xFFFFFFFFL)) {
				this.broken = "a message's prelude checksum does not match";
				break;
			}
			if (this.pendingLength - offset < total) {
				break;
			}
			if (crc(this.pending, offset, total - 4) != (readInt(this.pending, offset + total - 4) & 0xFFFFFFFFL)) {
				this.broken = "a message's checksum does not match";
				break;
			}
			Map<String, String> headerValues = headers(this.pending, offset + PRELUDE, headers);
			if (headerValues == null) {
				this.broken = "a message's headers cannot be read";
				break;
			}
			int payloadStart = offset + PRELUDE + headers;
			byte[] payload = new byte[total - headers - MIN_MESSAGE];
			System.arraycopy(this.pending, payloadStart, payload, 0, payload.length);
			offset += total;
			this.messages.accept(new Message(headerValues, payload));
		}
		if (this.broken != null) {
			this.pending = new byte[0];
			this.pendingLength = 0;
			return;
		}
		// keep only the unfinished message
		System.arraycopy(this.pending, offset, this.pending, 0, this.pendingLength - offset);
		this.pendingLength -= offset;
	}

	private void append(ByteBuffer view) {
		int needed = this.pendingLength + view.remaining();
		if (needed > this.pending.length) {
			byte[] grown = new byte[Math.max(needed, this.pending.length * 2)];
			System.arraycopy(this.pending, 0, grown, 0, this.pendingLength);
			this.pending = grown;
		}
		int count = view.remaining();
		view.get(this.pending, this.pendingLength, count);
		this.pendingLength += count;
	}

	/** Reads the headers; string values are kept, others skipped; null if malformed. */
	private static Map<String, String> headers(byte[] bytes, int start, int length) {
		Map<String, String> headers = new HashMap<>();
		int at = start;
		int end = start + length;
		while (at < end) {
			int nameLength = bytes[at++] & 0xFF;
			if (at + nameLength + 1 > end) {
				return null;
			}
			String name = new String(bytes, at, nameLength, StandardCharsets.UTF_8);
			at += nameLength;
			int type = bytes[at++] & 0xFF;
			int size = switch (type) {
				case 0, 1 -> 0;
				case 2 -> 1;
				case 3 -> 2;
				case 4 -> 4;
				case 5, 8 -> 8;
				case 9 -> 16;
				case 6, 7 -> (at + 2 <= end) ? 2 + (((bytes[at] & 0xFF) << 8) | (bytes[at + 1] & 0xFF)) : -1;
				default -> -1;
			};
			if (size < 0 || at + size > end) {
				return null;
			}
			if (type == 7) {
				headers.put(name, new String(bytes, at + 2, size - 2, StandardCharsets.UTF_8));
			}
			at += size;
		}
		return headers;
	}

	private static int readInt(byte[] bytes, int at) {
		return ((bytes[at] & 0xFF) << 24) | ((bytes[at + 1] & 0xFF) << 16) | ((bytes[at + 2] & 0xFF) << 8)
				| (bytes[at + 3] & 0xFF);
	}

	private static long crc(byte[] bytes, int offset, int length) {
		CRC32 crc = new CRC32();
		crc.update(bytes, offset, length);
		return crc.getValue();
	}

}
