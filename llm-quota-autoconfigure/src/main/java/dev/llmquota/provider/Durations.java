package dev.llmquota.provider;

import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.llmquota.core.kernel.Arith;

/**
 * The time grammars providers use on the wire: Go durations ({@code 12ms},
 * {@code 1m26.4s}, {@code 6m0s}), plain seconds ({@code 6}, {@code 0.5}), protobuf
 * durations ({@code 33s}), RFC 3339 instants and HTTP-dates. Every parser returns
 * {@code null} for what it cannot read rather than throwing.
 */
public final class Durations {

	private static final Pattern GO_PART = Pattern.compile("(\\d+(?:\\.\\d+)?)(h|ms|us|µs|ns|m|s)");

	private static final Pattern NUMBER = Pattern.compile("\\d+(?:\\.\\d+)?");

	private Durations() {
	}

	/**
	 * Reads a Go duration such as {@code 1h4m48s} or {@code 57.904s}, or plain seconds.
	 * @param text the text
	 * @return the duration, or {@code null} if unreadable
	 */
	public static Duration parse(String text) {
		if (text == null) {
			return null;
		}
		String value = text.trim();
		if (value.isEmpty()) {
			return null;
		}
		if (NUMBER.matcher(value).matches()) {
			return seconds(value);
		}
		Matcher matcher = GO_PART.matcher(value);
		long nanos = 0;
		int end = 0;
		while (matcher.find()) {
			if (matcher.start() != end) {
				return null;
			}
			end = matcher.end();
			double amount = Double.parseDouble(matcher.group(1));
			double unit = switch (matcher.group(2)) {
				case "h" -> 3_600e9;
				case "m" -> 60e9;
				case "s" -> 1e9;
				case "ms" -> 1e6;
				case "us", "µs" -> 1e3;
				default -> 1;
			};
			// two parts each near what a long holds must not wrap to a negative wait
			nanos = Arith.saturatedAdd(nanos, Math.round(amount * unit));
		}
		return (end == value.length() && end > 0) ? Duration.ofNanos(nanos) : null;
	}

	/**
	 * Reads a number of seconds, fractions allowed.
	 * @param text the text
	 * @return the duration, or {@code null} if unreadable or negative
	 */
	public static Duration seconds(String text) {
		if (text == null || !NUMBER.matcher(text.trim()).matches()) {
			return null;
		}
		return Duration.ofNanos(Math.round(Double.parseDouble(text.trim()) * 1e9));
	}

	/**
	 * Reads a {@code retry-after} value: seconds, or an HTTP-date.
	 * @param text the header value
	 * @param now the current time, to turn a date into a wait
	 * @return the wait, or {@code null} if unreadable
	 */
	public static Duration retryAfter(String text, Instant now) {
		Duration seconds = seconds(text);
		if (seconds != null) {
			return seconds;
		}
		Instant at = httpDate(text);
		return (at != null) ? Duration.between(now, at).isNegative() ? Duration.ZERO : Duration.between(now, at) : null;
	}

	/**
	 * Reads an RFC 3339 instant such as {@code 2025-10-14T09:21:08Z}.
	 * @param text the text
	 * @return the instant, or {@code null} if unreadable
	 */
	public static Instant instant(String text) {
		if (text == null) {
			return null;
		}
		try {
			return DateTimeFormatter.ISO_OFFSET_DATE_TIME.parse(text.trim(), Instant::from);
		}
		catch (DateTimeParseException ex) {
			return null;
		}
	}

	/**
	 * Reads an HTTP-date such as {@code Tue, 14 Oct 2025 09:21:07 GMT}.
	 * @param text the text
	 * @return the instant, or {@code null} if unreadable
	 */
	public static Instant httpDate(String text) {
		if (text == null) {
			return null;
		}
		try {
			return ZonedDateTime.parse(text.trim(), DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
		}
		catch (DateTimeParseException ex) {
			return null;
		}
	}

}
