package dev.llmquota.provider;

import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.llmquota.core.Dimension;
import dev.llmquota.core.ServerLimit;
import dev.llmquota.core.kernel.Arith;
import tools.jackson.databind.JsonNode;

/**
 * Anthropic's Messages API (first party; Bedrock and Vertex carry the same body shapes).
 */
final class AnthropicDialect implements Dialect {

	private static final Pattern REGAIN = Pattern
		.compile("regain access on (\\d{4}-\\d{2}-\\d{2}) at (\\d{2}:\\d{2}(?::\\d{2})?) UTC");

	/** What {@link #readBody} reads of an answer: its usage. */
	private static final Set<String> BODY_FIELDS = Set.of("usage");

	private static final String[] NO_QUOTA = { "batches", "files" };

	static final AnthropicDialect INSTANCE = new AnthropicDialect();

	private static final List<String> TEXT = List.of("system", "messages");

	private static final List<String> STRUCTURE = List.of("tools", "tool_choice");

	private static final List<String> MESSAGES = List.of("system", "messages");

	private static final RequestShape SHAPE = new RequestShape(TEXT, STRUCTURE, MESSAGES);

	private static final String PREFIX = "anthropic-ratelimit-";

	@Override
	public DialectId id() {
		return DialectId.ANTHROPIC;
	}

	@Override
	public String model(URI uri, JsonNode body) {
		return Json.text(body, "model");
	}

	@Override
	public Long outputCeiling(JsonNode body) {
		return Json.count(body, "max_tokens");
	}

	/**
	 * Token counting (free, under its own request limit), message batches and files spend
	 * no model's quota.
	 */
	@Override
	public boolean spendsQuota(String path, int below) {
		return !path.endsWith("/count_tokens") && !PathSegments.anyOf(path, below, NO_QUOTA);
	}

	@Override
	public RequestShape requestShape() {
		return SHAPE;
	}

	@Override
	public boolean streaming(URI uri, JsonNode body) {
		return Json.flag(body, "stream", false);
	}

	@Override
	public List<ServerLimit> rateLimits(HeaderLookup headers, Instant now) {
		List<ServerLimit> limits = new ArrayList<>(4);
		read(limits, headers, Dimension.REQUESTS_PER_MINUTE, "requests", now);
		read(limits, headers, Dimension.INPUT_TOKENS_PER_MINUTE, "input-tokens", now);
		read(limits, headers, Dimension.OUTPUT_TOKENS_PER_MINUTE, "output-tokens", now);
		// the most restrictive token limit in effect, or input plus output
		read(limits, headers, Dimension.TOKENS_PER_MINUTE, "tokens", now);
		// A report whose bucket was full again well before the answer was sent (its
		// reset more than a second before the answer's Date: a long call's headers,
		// written as it was admitted) says nothing of what is left now; its limit still
		// holds. Both instants are the provider's clock, to the second (a bucket full
		// again within the second reads reset = Date), so no skew enters.
		// A report written earlier with its reset still ahead (a long call admitted when
		// the bucket was low) under-states what is left: the bucket refills
		// continuously, full at its reset, so the answer's Date and the reset tell the
		// level the report implies then, which the remaining is raised to (a fresh
		// report says as much already). Spending after the report was written is in
		// neither figure; the next answer's report tells it.
		boolean correctable = false;
		for (ServerLimit limit : limits) {
			correctable |= limit.reset() != null && limit.remaining() != null;
		}
		Instant sent = correctable ? Durations.httpDate(headers.get("date")) : null;
		if (sent != null) {
			limits.replaceAll((limit) -> asOf(limit, sent));
		}
		return limits;
	}

	/** A report as of the answer's Date. */
	private static ServerLimit asOf(ServerLimit limit, Instant sent) {
		if (limit.reset() == null || limit.remaining() == null) {
			return limit;
		}
		if (limit.reset().plusSeconds(1).isBefore(sent)) {
			// full again well before the answer was sent: what is left now is unknown
			return new ServerLimit(limit.dimension(), limit.limit(), null, limit.reset());
		}
		if (limit.limit() == null) {
			return limit;
		}
		// the level the report implies at the Date: each instant given to the second,
		// so a second more to refill is counted against it
		long toFullMillis = Math.min(60_000, Math.max(0, limit.reset().toEpochMilli() - sent.toEpochMilli()) + 1_000);
		long implied = limit.limit() - Arith.mulDivCeil(limit.limit(), toFullMillis, 60_000);
		return (limit.remaining() < implied) ? new ServerLimit(limit.dimension(), limit.limit(), implied, limit.reset())
				: limit;
	}

	private static void read(List<ServerLimit> limits, HeaderLookup headers, Dimension dimension, String name,
			Instant now) {
		RateLimitHeaders.read(limits, headers, dimension, PREFIX + name + "-limit", PREFIX + name + "-remaining",
				PREFIX + name + "-reset", RateLimitHeaders.ABSOLUTE, now);
	}

	@Override
	public Set<String> bodyFields() {
		return BODY_FIELDS;
	}

	@Override
	public void readBody(JsonNode body, UsageAccumulator usage) {
		readUsage(Json.at(body, "usage"), usage);
	}

	@Override
	public void readEvent(JsonNode event, UsageAccumulator usage) {
		String type = Json.text(event, "type");
		if ("message_start".equals(type)) {
			// output_tokens here is a placeholder; the last message_delta carries the
			// real count
			readInput(Json.at(event, "message", "usage"), usage);
		}
		else if ("message_delta".equals(type)) {
			// cumulative counts: the last one wins, never summed
			readUsage(Json.at(event, "usage"), usage);
		}
		else if ("content_block_delta".equals(type)) {
			usage.outputText(Json.text(event, "delta", "text"));
			usage.outputText(Json.text(event, "delta", "partial_json"));
			usage.outputText(Json.text(event, "delta", "thinking"));
		}
		else if ("message_stop".equals(type)) {
			usage.end();
		}
	}

	@Override
	public Answer classify(int status, HeaderLookup headers, JsonNode body, Instant now) {
		String message = Refusals.message(body);
		String type = Json.text(body, "error", "type");
		String lower = (message != null) ? message.toLowerCase(Locale.ROOT) : "";
		if ("enforced_spend_limit_reached".equals(Json.text(body, "error", "details", "error_code"))
				|| "billing_error".equals(type) || lower.contains("credit balance is too low")
				|| lower.contains("api usage limits")) {
			Instant back = regainedAt(message);
			return (back != null && back.isAfter(now)) ? Answer.accountExhausted(Duration.between(now, back), message)
					: Answer.exhausted(null, true, message);
		}
		if ("overloaded_error".equals(type)) {
			return Answer.overloaded(Waits.fromHeaders(headers, now), Waits.retryAllowed(headers), message);
		}
		if (status != 429 || !"rate_limit_error".equals(type)) {
			return Refusals.generic(status, headers, message, now);
		}
		Dimension dimension = Refusals.dimensionIn(message);
		if (dimension == null) {
			dimension = emptiest(headers, now);
		}
		return Refusals.withResetWait(
				Answer.rateLimited(dimension, Waits.fromHeaders(headers, now), Waits.retryAllowed(headers), message),
				this, headers, now);
	}

	/** The dimension whose headers show nothing remaining. */
	private Dimension emptiest(HeaderLookup headers, Instant now) {
		for (ServerLimit limit : rateLimits(headers, now)) {
			if (limit.remaining() != null && limit.remaining() == 0) {
				return limit.dimension();
			}
		}
		return null;
	}

	private static void readUsage(JsonNode counts, UsageAccumulator usage) {
		if (counts == null || !counts.isObject()) {
			return;
		}
		readInput(counts, usage);
		usage.output(usage.count(counts, "output_tokens"));
	}

	private static void readInput(JsonNode counts, UsageAccumulator usage) {
		if (counts == null || !counts.isObject()) {
			return;
		}
		Long uncached = usage.count(counts, "input_tokens");
		Long written = usage.count(counts, "cache_creation_input_tokens");
		Long read = usage.count(counts, "cache_read_input_tokens");
		// input_tokens counts only what follows the last cache breakpoint; a
		// message_delta may carry some of the parts only
		usage.inputParts(uncached, read, written);
	}

	/**
	 * When a spend cap's message says access comes back ("You will regain access on
	 * 2025-11-01 at 00:00 UTC."), or {@code null}.
	 */
	private static Instant regainedAt(String message) {
		Matcher matcher = (message != null) ? REGAIN.matcher(message) : null;
		if (matcher == null || !matcher.find()) {
			return null;
		}
		try {
			return LocalDateTime.parse(matcher.group(1) + "T" + matcher.group(2)).toInstant(ZoneOffset.UTC);
		}
		catch (DateTimeParseException ex) {
			return null;
		}
	}

}
