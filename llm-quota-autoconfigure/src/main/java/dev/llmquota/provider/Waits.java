package dev.llmquota.provider;

import java.time.Duration;
import java.time.Instant;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where a refusal says how long to wait, in the order to trust them:
 * {@code retry-after-ms}, {@code retry-after} (seconds or an HTTP-date), then a hint in
 * the message ("Please try again in 2.504s", "Please retry after 6 seconds", "Please
 * retry in 33.118s").
 */
public final class Waits {

	private static final Pattern HINT = Pattern.compile(
			"(?i)(?:try again|retry)\\s+(?:in|after)\\s+((?:\\d+(?:\\.\\d+)?(?:h|ms|m|s))+|\\d+(?:\\.\\d+)?)\\s*(seconds?)?");

	private Waits() {
	}

	/**
	 * Returns the wait a refusal's headers advertise: {@code retry-after-ms}, else
	 * {@code retry-after} in seconds or as an HTTP-date. A {@code retry-after-ms} of
	 * nothing gives way to a {@code retry-after} that names a wait, as in the official
	 * SDKs: it says nothing the other does not.
	 * @param headers the refusal's headers
	 * @param now the current wall time, for an HTTP-date
	 * @return the wait, or {@code null} if the headers name none
	 */
	public static Duration fromHeaders(HeaderLookup headers, Instant now) {
		String millis = headers.get("retry-after-ms");
		Duration precise = null;
		if (millis != null) {
			Duration seconds = Durations.seconds(millis);
			precise = (seconds != null) ? Duration.ofNanos(seconds.toNanos() / 1000) : null;
			unreadable("retry-after-ms", millis, seconds);
		}
		if (precise != null && precise.compareTo(Duration.ZERO) > 0) {
			return precise;
		}
		String after = headers.get("retry-after");
		Duration coarse = (after != null) ? Durations.retryAfter(after, now) : null;
		if (after != null) {
			unreadable("retry-after", after, coarse);
		}
		return (coarse != null) ? coarse : precise;
	}

	/** One log line for a wait header that says nothing readable: the call backs off. */
	private static void unreadable(String header, String value, Duration read) {
		if (read == null) {
			String shown = (value.length() > 40) ? value.substring(0, 40) + "..." : value;
			LogOnce.warn("unreadable " + header, "llm-quota could not read a provider's " + header + " header ('"
					+ shown + "'); it backs off as for a refusal that names no wait");
		}
	}

	/** Returns the wait a message hints at, or {@code null}. */
	static Duration fromMessage(String message) {
		if (message == null) {
			return null;
		}
		Matcher matcher = HINT.matcher(message);
		if (!matcher.find()) {
			return null;
		}
		return Durations.parse(matcher.group(1));
	}

	/** Returns the first wait that is known. */
	static Duration first(Duration... waits) {
		for (Duration wait : waits) {
			if (wait != null) {
				return wait;
			}
		}
		return null;
	}

	/**
	 * The header by which an answer allows a retry or forbids it ({@code false}), as the
	 * providers and their SDKs use it; llm-quota sets it on what it hands on once it has
	 * decided.
	 */
	public static final String SHOULD_RETRY = "x-should-retry";

	/**
	 * Returns whether an answer allows a retry: not when it says
	 * {@code x-should-retry: false}, as the provider may, and as llm-quota marks every
	 * refusal it hands on once it has made its own attempts.
	 * @param headers the answer's headers
	 * @return whether a retry is allowed
	 */
	public static boolean retryAllowed(HeaderLookup headers) {
		return !"false".equalsIgnoreCase(trim(headers.get(SHOULD_RETRY)));
	}

	private static String trim(String value) {
		return (value != null) ? value.trim() : null;
	}

}
