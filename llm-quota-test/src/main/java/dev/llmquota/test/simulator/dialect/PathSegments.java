package dev.llmquota.test.simulator.dialect;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Percent-decoding of raw request paths, once: {@code %2F} becomes a slash inside a
 * segment, and {@code +} stays a plus (it means a space only in query strings).
 */
final class PathSegments {

	private PathSegments() {
	}

	/**
	 * Decodes a raw path or path segment.
	 * @param raw the text as sent
	 * @return the decoded text
	 * @throws BadRequestException if a percent sign is not followed by two hex digits
	 */
	static String decode(String raw) {
		if (raw.indexOf('%') < 0) {
			return raw;
		}
		ByteArrayOutputStream bytes = new ByteArrayOutputStream(raw.length());
		for (int i = 0; i < raw.length(); i++) {
			char c = raw.charAt(i);
			if (c != '%') {
				byte[] encoded = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
				bytes.write(encoded, 0, encoded.length);
				continue;
			}
			int high = (i + 2 < raw.length()) ? Character.digit(raw.charAt(i + 1), 16) : -1;
			int low = (high >= 0) ? Character.digit(raw.charAt(i + 2), 16) : -1;
			if (low < 0) {
				throw new BadRequestException("Malformed percent-encoding in the request path: " + raw);
			}
			bytes.write((high << 4) | low);
			i += 2;
		}
		return bytes.toString(StandardCharsets.UTF_8);
	}

}
