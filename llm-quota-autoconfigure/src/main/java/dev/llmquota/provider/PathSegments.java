package dev.llmquota.provider;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The decoded segments of a URL's path, each decoded once (model ids such as Bedrock ARNs
 * carry encoded slashes and colons).
 */
final class PathSegments {

	private PathSegments() {
	}

	static List<String> of(URI uri) {
		String raw = uri.getRawPath();
		List<String> segments = new ArrayList<>();
		if (raw == null) {
			return segments;
		}
		for (String segment : raw.split("/")) {
			if (!segment.isEmpty()) {
				segments.add(URLDecoder.decode(segment.replace("+", "%2B"), StandardCharsets.UTF_8));
			}
		}
		return segments;
	}

}
