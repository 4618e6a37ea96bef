package dev.llmquota.provider;

import java.time.Duration;
import java.time.Instant;
import java.util.Locale;

import dev.llmquota.DurationText;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.ServerLimit;
import tools.jackson.databind.JsonNode;

/**
 * What every dialect's refusals have in common: the classification of answers a dialect
 * cannot read more precisely, and the wait taken from reset headers as the last resort.
 */
final class Refusals {

	/**
	 * The furthest reset of a per-minute limit believed: twice the longest seen on the
	 * wire (Groq's {@code 1h4m48s}, an account deep in debt). A reset is the time until
	 * the limit is whole again, which a per-minute limit never puts a month away; a
	 * provider's explicit wait ({@code retry-after}) is another matter: Azure's spent
	 * daily quota asks for a day.
	 */
	static final Duration LONGEST_RATE_RESET = Duration.ofHours(2);

	private Refusals() {
	}

	/**
	 * Classifies by status alone: a 429 is a rate limit on an unknown dimension, 5xx and
	 * 529 an overload, a 403 that speaks of quota a spent quota.
	 */
	static Answer generic(int status, HeaderLookup headers, String message, Instant now) {
		boolean retry = Waits.retryAllowed(headers);
		Duration wait = Waits.first(Waits.fromHeaders(headers, now), Waits.fromMessage(message));
		if (status == 429) {
			return Answer.rateLimited(null, wait, retry, message);
		}
		// not Google's "requires a quota project, which is not set": credentials, not a
		// spent quota, and no probe would ever find it back
		if (status == 403 && message != null && message.toLowerCase(Locale.ROOT).contains("quota")
				&& !message.toLowerCase(Locale.ROOT).contains("quota project")) {
			return Answer.exhausted(null, false, message);
		}
		if (status == 529 || status == 500 || status == 502 || status == 503 || status == 504) {
			return Answer.overloaded(wait, retry, message);
		}
		return Answer.pass();
	}

	/**
	 * Fills a rate limit's unknown wait from the reset header of its dimension (time to
	 * full refill: longer than needed, so only the last resort).
	 */
	static Answer withResetWait(Answer answer, Dialect dialect, HeaderLookup headers, Instant now) {
		if (answer.kind() != Answer.Kind.RATE_LIMITED || answer.delay() != null) {
			return answer;
		}
		Duration wait = null;
		for (ServerLimit limit : dialect.rateLimits(headers, now)) {
			boolean named = limit.dimension() == answer.dimension();
			boolean empty = answer.dimension() == null && limit.remaining() != null && limit.remaining() == 0;
			if ((named || empty) && limit.reset() != null && limit.reset().isAfter(now)) {
				Duration until = Duration.between(now, limit.reset());
				if (until.compareTo(LONGEST_RATE_RESET) > 0) {
					LogOnce.warn("implausible reset", "llm-quota did not believe a per-minute limit's reset "
							+ DurationText.of(until) + " away; it backs off as for a refusal that names no wait");
					continue;
				}
				wait = (wait == null || until.compareTo(wait) < 0) ? until : wait;
			}
		}
		return (wait != null) ? new Answer(answer.kind(), answer.dimension(), wait, answer.wholeAccount(),
				answer.retryAllowed(), answer.reason()) : answer;
	}

	/**
	 * Names the dimension a message speaks of ("tokens per min (TPM)", "input tokens per
	 * minute").
	 */
	static Dimension dimensionIn(String message) {
		if (message == null) {
			return null;
		}
		String text = message.toLowerCase(Locale.ROOT);
		if (text.contains("input tokens per minute") || text.contains("input token")) {
			return Dimension.INPUT_TOKENS_PER_MINUTE;
		}
		if (text.contains("output tokens per minute") || text.contains("output token")) {
			return Dimension.OUTPUT_TOKENS_PER_MINUTE;
		}
		if (text.contains("tokens per day") || text.contains("(tpd)")) {
			return Dimension.TOKENS_PER_DAY;
		}
		if (text.contains("requests per day") || text.contains("(rpd)")) {
			return Dimension.REQUESTS_PER_DAY;
		}
		if (text.contains("tokens per min") || text.contains("(tpm)") || text.contains("token rate limit")
				|| text.contains("too many tokens")) {
			return Dimension.TOKENS_PER_MINUTE;
		}
		if (text.contains("requests per min") || text.contains("(rpm)") || text.contains("call rate limit")
				|| text.contains("too many requests") || text.contains("request rate")) {
			return Dimension.REQUESTS_PER_MINUTE;
		}
		return null;
	}

	/**
	 * Returns the message of an OpenAI-, Anthropic- or Google-style error body, or
	 * Ollama's ({@code {"error": "..."}}). A top-level {@code message} comes before a
	 * string {@code error}: beside one, that is the HTTP reason phrase (a gateway's
	 * {@code {"message": "...", "error": "Too Many Requests"}}, as NestJS and Spring Boot
	 * write them).
	 */
	static String message(JsonNode body) {
		String nested = Json.text(body, "error", "message");
		if (nested != null) {
			return nested;
		}
		String message = Json.text(body, "message");
		return (message != null) ? message : Json.text(body, "error");
	}

}
