package dev.llmquota.provider;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.BiFunction;

import dev.llmquota.core.Dimension;
import dev.llmquota.core.ServerLimit;

/**
 * Reads one dimension's limit, remaining and reset headers. Missing, negative (the
 * {@code -1} sentinel) and unreadable values are left out, never guessed.
 */
final class RateLimitHeaders {

	/** Reset as a duration from now (OpenAI's Go durations, Azure's seconds). */
	static final BiFunction<String, Instant, Instant> RELATIVE = (value, now) -> {
		Duration duration = Durations.parse(value);
		return (duration != null) ? now.plus(duration) : null;
	};

	/** Reset as an RFC 3339 instant (Anthropic). */
	static final BiFunction<String, Instant, Instant> ABSOLUTE = (value, now) -> Durations.instant(value);

	private RateLimitHeaders() {
	}

	/**
	 * The smallest per-minute token limit believed: no provider sells less (Azure's
	 * smallest deployment is 1,000 tokens a minute). A smaller one, learned, would hold
	 * every call larger than it for minutes each.
	 */
	static final long LEAST_TOKEN_LIMIT = 1_000;

	/**
	 * The furthest a requests-per-minute bucket's reset is believed: a minute, and half a
	 * minute more for the clocks of the provider and this process.
	 */
	static final Duration LONGEST_MINUTE_RESET = Duration.ofSeconds(90);

	static void read(List<ServerLimit> into, HeaderLookup headers, Dimension dimension, String limit, String remaining,
			String reset, BiFunction<String, Instant, Instant> resetGrammar, Instant now) {
		Long limitValue = count(headers.get(limit));
		if (limitValue != null && dimension.countsTokens() && limitValue < LEAST_TOKEN_LIMIT) {
			LogOnce.warn("implausible limit " + dimension,
					"llm-quota did not believe a " + dimension.id() + " limit of " + limitValue
							+ " in a provider's headers: no provider sells less than " + LEAST_TOKEN_LIMIT);
			limitValue = null;
		}
		Long remainingValue = count(headers.get(remaining));
		String resetText = headers.get(reset);
		Instant resetValue = (resetText != null) ? resetGrammar.apply(resetText, now) : null;
		if (resetValue != null && dimension == Dimension.REQUESTS_PER_MINUTE
				&& resetValue.isAfter(now.plus(LONGEST_MINUTE_RESET))) {
			// a minute's requests are all back within the minute (a token bucket may be
			// in debt for minutes, from reserved output: OpenAI's "6m0s"; requests
			// are not): a report further off counts another window (Groq's request
			// headers count a day)
			LogOnce.warn("not a minute " + limit,
					"llm-quota did not read " + limit + " and " + remaining + " as a " + dimension.id()
							+ " limit: their reset, " + resetText + ", is further off than a minute's window can be"
							+ " (a per-day limit under the same names); set the entry's limits for it");
			return;
		}
		if (limitValue != null || remainingValue != null || resetValue != null) {
			into.add(new ServerLimit(dimension, limitValue, remainingValue, resetValue));
		}
	}

	static Long count(String value) {
		if (value == null) {
			return null;
		}
		String trimmed = value.trim();
		if (trimmed.isEmpty() || trimmed.length() > 18) {
			return null;
		}
		for (int i = 0; i < trimmed.length(); i++) {
			if (!Character.isDigit(trimmed.charAt(i))) {
				return null;
			}
		}
		return Long.parseLong(trimmed);
	}

}
