package dev.llmquota;

import java.time.Duration;

/**
 * Writes durations the way people and Spring Boot's properties write them: {@code 30s},
 * {@code 1.4s}, {@code 250ms}, {@code 2m30s}, {@code 1h5m}, never {@code PT30S}.
 */
public final class DurationText {

	private DurationText() {
	}

	/**
	 * Returns a duration as text.
	 * @param duration the duration, or {@code null}
	 * @return the text, or {@code "unknown"} for {@code null}
	 */
	public static String of(Duration duration) {
		if (duration == null) {
			return "unknown";
		}
		if (duration.isNegative()) {
			return "-" + of(duration.negated());
		}
		long millis = duration.toMillis();
		if (millis < 1000) {
			return (millis == 0 && !duration.isZero()) ? (duration.toNanos() / 1000) + "us" : millis + "ms";
		}
		long hours = millis / 3_600_000;
		long minutes = (millis / 60_000) % 60;
		long rest = millis % 60_000;
		StringBuilder text = new StringBuilder();
		if (hours > 0) {
			text.append(hours).append('h');
		}
		if (minutes > 0) {
			text.append(minutes).append('m');
		}
		if (rest > 0) {
			text.append(rest / 1000);
			long fraction = rest % 1000;
			if (fraction > 0) {
				String digits = String.format("%03d", fraction);
				text.append('.').append(digits.replaceAll("0+$", ""));
			}
			text.append('s');
		}
		return text.toString();
	}

}
