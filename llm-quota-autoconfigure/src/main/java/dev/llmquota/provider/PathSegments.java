package dev.llmquota.provider;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The decoded segments of a URL's path, each decoded once (model ids such as Bedrock ARNs
 * carry encoded slashes and colons).
 */
final class PathSegments {

	private PathSegments() {
	}

	/** Segments followed by a name of the caller's choosing, not an endpoint. */
	private static final Set<String> NAMING = Set.of("deployments", "models", "projects", "locations", "publishers",
			"endpoints", "tunedModels");

	/**
	 * Returns whether a segment of the path is one of the names; a deployment's, model's,
	 * project's or location's own name never counts.
	 */
	static boolean anyOf(URI uri, Set<String> names) {
		List<String> segments = of(uri);
		for (int i = 0; i < segments.size(); i++) {
			boolean named = i > 0 && NAMING.contains(segments.get(i - 1));
			if (!named && names.contains(segments.get(i))) {
				return true;
			}
		}
		return false;
	}

	/** Returns whether the path ends with one of the suffixes. */
	static boolean endsWith(URI uri, String... suffixes) {
		String path = uri.getRawPath();
		if (path == null) {
			return false;
		}
		for (String suffix : suffixes) {
			if (path.endsWith(suffix)) {
				return true;
			}
		}
		return false;
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
