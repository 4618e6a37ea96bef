package dev.llmquota.test.simulator.dialect;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;

/**
 * AWS's binary event-stream framing ({@code application/vnd.amazon.eventstream}), as
 * Bedrock streams: one message per event, big-endian, a prelude of total length, headers
 * length and their CRC32, string headers, the payload, and a CRC32 of all before it.
 */
final class EventStream {

	static final String CONTENT_TYPE = "application/vnd.amazon.eventstream";

	private static final int PRELUDE_LENGTH = 12;

	private static final int CRC_LENGTH = 4;

	private static final byte STRING_TYPE = 7;

	private EventStream() {
	}

	/**
	 * One event message with the headers Bedrock sends: {@code :event-type},
	 * {@code :content-type} (JSON) and {@code :message-type} ({@code event}).
	 * @param eventType the event type, for example {@code contentBlockDelta}
	 * @param payload the event's JSON as UTF-8
	 * @return the framed message
	 */
	static byte[] event(String eventType, byte[] payload) {
		ByteArrayOutputStream headers = new ByteArrayOutputStream();
		header(headers, ":event-type", eventType);
		header(headers, ":content-type", "application/json");
		header(headers, ":message-type", "event");
		int headersLength = headers.size();
		int total = PRELUDE_LENGTH + headersLength + payload.length + CRC_LENGTH;
		ByteBuffer message = ByteBuffer.allocate(total);
		message.putInt(total).putInt(headersLength);
		message.putInt(crc(message.array(), 8));
		message.put(headers.toByteArray()).put(payload);
		message.putInt(crc(message.array(), total - CRC_LENGTH));
		return message.array();
	}

	private static void header(ByteArrayOutputStream headers, String name, String value) {
		byte[] nameBytes = name.getBytes(StandardCharsets.UTF_8);
		byte[] valueBytes = value.getBytes(StandardCharsets.UTF_8);
		headers.write(nameBytes.length);
		headers.writeBytes(nameBytes);
		headers.write(STRING_TYPE);
		headers.write(valueBytes.length >>> 8);
		headers.write(valueBytes.length);
		headers.writeBytes(valueBytes);
	}

	private static int crc(byte[] bytes, int length) {
		CRC32 crc = new CRC32();
		crc.update(bytes, 0, length);
		return (int) crc.getValue();
	}

}
