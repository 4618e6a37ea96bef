package dev.llmquota.test.simulator.dialect;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Locale;

/**
 * Value formats providers use on the wire: Go durations, RFC 3339 instants, whole
 * seconds.
 */
public final class Formats {

	private Formats() {
	}

	/**
	 * A Go {@code time.Duration} string at millisecond resolution, as OpenAI sends:
	 * {@code 12ms}, {@code 57.904s}, {@code 6m0s}, {@code 1h4m48s}.
	 * @param duration the duration
	 * @return the Go duration text
	 */
	public static String goDuration(Duration duration) {
		long millis = ceilMillis(duration);
		if (millis <= 0) {
			return "0s";
		}
		if (millis < 1000) {
			return millis + "ms";
		}
		long hours = millis / 3_600_000;
		long minutes = (millis / 60_000) % 60;
		BigDecimal seconds = BigDecimal.valueOf(millis % 60_000, 3).stripTrailingZeros();
		String secondsText = (seconds.signum() == 0) ? "0" : seconds.toPlainString();
		StringBuilder text = new StringBuilder();
		if (hours > 0) {
			text.append(hours).append('h');
		}
		if (hours > 0 || minutes > 0) {
			text.append(minutes).append('m');
		}
		return text.append(secondsText).append('s').toString();
	}

	/**
	 * Milliseconds, rounded up.
	 * @param duration the duration
	 * @return milliseconds
	 */
	public static long ceilMillis(Duration duration) {
		long nanos = duration.toNanos();
		return (nanos + 999_999) / 1_000_000;
	}

	/**
	 * Whole seconds, rounded up.
	 * @param duration the duration
	 * @return seconds
	 */
	public static long ceilSeconds(Duration duration) {
		long nanos = duration.toNanos();
		return (nanos + 999_999_999) / 1_000_000_000;
	}

	/**
	 * Seconds with up to nine decimals, as Gemini's prose ({@code 33.118307421}).
	 * @param duration the duration
	 * @return decimal seconds
	 */
	public static String decimalSeconds(Duration duration) {
		return BigDecimal.valueOf(duration.toNanos(), 9).stripTrailingZeros().toPlainString();
	}

	/**
	 * An RFC 3339 UTC timestamp at second resolution, rounded up.
	 * @param instant the instant
	 * @return for example {@code 2025-10-14T09:21:08Z}
	 */
	public static String rfc3339(Instant instant) {
		Instant truncated = instant.truncatedTo(ChronoUnit.SECONDS);
		return (truncated.equals(instant) ? truncated : truncated.plusSeconds(1)).toString();
	}

	/**
	 * A count with thousands separators, as in Anthropic's prose ({@code 30,000}).
	 * @param value the count
	 * @return the grouped number
	 */
	public static String grouped(long value) {
		return String.format(Locale.ROOT, "%,d", value);
	}

}
