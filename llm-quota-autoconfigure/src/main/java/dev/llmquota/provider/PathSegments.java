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

	/** Segments followed by a name of the caller's choosing, not an endpoint. */
	private static final String[] NAMING = { "deployments", "models", "projects", "locations", "publishers",
			"endpoints", "tunedModels" };

	/**
	 * Returns whether a segment of a raw path, from an index on, is one of the names; a
	 * deployment's, model's, project's or location's own name never counts, the segment
	 * naming it maybe before that index. Read in place: this runs on every call.
	 * @param path the raw path
	 * @param from where the segments to look at start (below a base-url's path)
	 * @param names the names
	 * @return whether a segment is one of them
	 */
	static boolean anyOf(String path, int from, String... names) {
		return find(path, from, names) >= 0;
	}

	/**
	 * Returns whether a segment of a raw path, from an index on, is one of the names and
	 * another segment follows it (an object's own operation below an endpoint, such as
	 * {@code responses/<id>/cancel}); named segments never count, as for {@link #anyOf}.
	 * @param path the raw path
	 * @param from where the segments to look at start
	 * @param names the names
	 * @return whether a segment is one of them, with more after it
	 */
	static boolean anyOfWithMore(String path, int from, String... names) {
		int end = find(path, from, names);
		if (end < 0) {
			return false;
		}
		for (int i = end; i < path.length(); i++) {
			if (path.charAt(i) != '/') {
				return true;
			}
		}
		return false;
	}

	/** Where the first segment that is one of the names ends, or -1. */
	private static int find(String path, int from, String... names) {
		int previous = -1;
		int previousEnd = -1;
		int start = 0;
		while (start <= path.length()) {
			int end = path.indexOf('/', start);
			end = (end < 0) ? path.length() : end;
			if (end > start) {
				boolean named = previous >= 0 && matches(path, previous, previousEnd, NAMING);
				if (start >= from && !named && matches(path, start, end, names)) {
					return end;
				}
				previous = start;
				previousEnd = end;
			}
			start = end + 1;
		}
		return -1;
	}

	private static boolean matches(String path, int from, int to, String[] names) {
		for (String name : names) {
			if (name.length() == to - from && path.regionMatches(from, name, 0, name.length())) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Returns whether a raw path ends with one of the suffixes.
	 * @param path the raw path
	 * @param suffixes the suffixes
	 * @return whether it ends with one
	 */
	static boolean endsWith(String path, String... suffixes) {
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
