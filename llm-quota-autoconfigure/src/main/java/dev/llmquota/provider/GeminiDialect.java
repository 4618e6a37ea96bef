package dev.llmquota.provider;

import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import dev.llmquota.core.Dimension;
import tools.jackson.databind.JsonNode;

/**
 * Google's Gemini API and Vertex AI: the model in the path before
 * {@code :generateContent}; no rate-limit headers.
 */
final class GeminiDialect implements Dialect {

	private static final String[] NO_QUOTA = { "files", "cachedContents", "batches" };

	private static final String[] NO_QUOTA_METHODS = { ":countTokens", ":computeTokens", ":batchGenerateContent",
			":asyncBatchEmbedContent" };

	static final GeminiDialect INSTANCE = new GeminiDialect();

	private static final List<String> TEXT = List.of("systemInstruction", "system_instruction", "contents", "content",
			"requests");

	private static final List<String> STRUCTURE = List.of("tools", "toolConfig");

	private static final List<String> MESSAGES = List.of("systemInstruction", "system_instruction", "contents");

	private static final RequestShape SHAPE = new RequestShape(TEXT, STRUCTURE, MESSAGES);

	@Override
	public DialectId id() {
		return DialectId.GEMINI;
	}

	@Override
	public String model(URI uri, JsonNode body) {
		List<String> segments = PathSegments.of(uri);
		int index = segments.indexOf("models");
		if (index < 0 || index + 1 >= segments.size()) {
			return Json.text(body, "model");
		}
		String segment = segments.get(index + 1);
		int colon = segment.lastIndexOf(':');
		return (colon > 0) ? segment.substring(0, colon) : segment;
	}

	@Override
	public Long outputCeiling(JsonNode body) {
		return Json.max(Json.count(body, "generationConfig", "maxOutputTokens"),
				Json.count(body, "generation_config", "max_output_tokens"));
	}

	@Override
	public int choices(JsonNode body) {
		return Json.choices(Json.count(body, "generationConfig", "candidateCount"),
				Json.count(body, "generation_config", "candidate_count"));
	}

	/**
	 * Token counting (free, under its own request limit), batch jobs, files and cached
	 * contents spend no model's quota.
	 */
	@Override
	public boolean spendsQuota(String path, int below) {
		return !PathSegments.endsWith(path, NO_QUOTA_METHODS) && !PathSegments.anyOf(path, below, NO_QUOTA);
	}

	/** A call on a cached content. */
	@Override
	public boolean storedInput(JsonNode body) {
		return Json.text(body, "cachedContent") != null || Json.text(body, "cached_content") != null;
	}

	@Override
	public RequestShape requestShape() {
		return SHAPE;
	}

	@Override
	public boolean streaming(URI uri, JsonNode body) {
		String path = uri.getRawPath();
		return path != null && path.endsWith(":streamGenerateContent");
	}

	@Override
	public boolean generates(URI uri, JsonNode body) {
		String path = uri.getRawPath();
		return path == null || !(path.endsWith(":embedContent") || path.endsWith(":batchEmbedContents"));
	}

	@Override
	public Answer classify(int status, HeaderLookup headers, JsonNode body, Instant now) {
		String message = Refusals.message(body);
		if (status != 429 || !"RESOURCE_EXHAUSTED".equals(Json.text(body, "error", "status"))) {
			return Refusals.generic(status, headers, message, now);
		}
		JsonNode details = Json.at(body, "error", "details");
		String quotaId = null;
		Duration wait = null;
		if (details != null && details.isArray()) {
			for (JsonNode detail : details.values()) {
				String type = Json.text(detail, "@type");
				if (type != null && type.endsWith("google.rpc.QuotaFailure")) {
					JsonNode violations = Json.at(detail, "violations");
					if (violations != null && violations.isArray()) {
						for (JsonNode violation : violations.values()) {
							String id = Json.text(violation, "quotaId");
							// a per-day violation decides: it is not waited out
							// in seconds
							if (id != null && (quotaId == null || id.contains("PerDay"))) {
								quotaId = id;
							}
						}
					}
				}
				else if (type != null && type.endsWith("google.rpc.RetryInfo")) {
					wait = Durations.parse(Json.text(detail, "retryDelay"));
				}
			}
		}
		if (quotaId == null) {
			// Vertex's shared capacity: no quota of ours is named
			return Answer.overloaded(wait, true, message);
		}
		Dimension dimension = dimension(quotaId);
		if (quotaId.contains("PerDay")) {
			return Answer.exhausted(dimension, false, message);
		}
		return Answer.rateLimited(dimension,
				Waits.first(Waits.fromHeaders(headers, now), wait, Waits.fromMessage(message)), true, message);
	}

	private static Dimension dimension(String quotaId) {
		boolean daily = quotaId.contains("PerDay");
		if (quotaId.contains("InputToken")) {
			return daily ? Dimension.TOKENS_PER_DAY : Dimension.INPUT_TOKENS_PER_MINUTE;
		}
		if (quotaId.contains("Token")) {
			return daily ? Dimension.TOKENS_PER_DAY : Dimension.TOKENS_PER_MINUTE;
		}
		return daily ? Dimension.REQUESTS_PER_DAY : Dimension.REQUESTS_PER_MINUTE;
	}

	@Override
	public void readBody(JsonNode body, UsageAccumulator usage) {
		readEvent(body, usage);
	}

	@Override
	public void readEvent(JsonNode event, UsageAccumulator usage) {
		JsonNode candidates = Json.at(event, "candidates");
		if (candidates != null && candidates.isArray()) {
			for (JsonNode candidate : candidates.values()) {
				JsonNode parts = Json.at(candidate, "content", "parts");
				if (parts != null && parts.isArray()) {
					parts.values().forEach((part) -> usage.outputText(Json.text(part, "text")));
				}
			}
		}
		JsonNode counts = Json.at(event, "usageMetadata");
		if (counts == null || !counts.isObject()) {
			return;
		}
		// promptTokenCount includes cached content; what provider-run tools fed the
		// model is beside it; thoughts are outside candidatesTokenCount
		usage.input(Json.sum(usage.count(counts, "promptTokenCount"), usage.count(counts, "toolUsePromptTokenCount")),
				usage.count(counts, "cachedContentTokenCount"));
		Long candidatesCount = usage.count(counts, "candidatesTokenCount");
		Long thoughts = usage.count(counts, "thoughtsTokenCount");
		boolean finished = finished(event);
		if (candidatesCount != null || thoughts != null) {
			usage.output(Json.sum(candidatesCount, thoughts));
		}
		else if (finished && usage.count(counts, "promptTokenCount") != null) {
			// Gemini leaves out counts that are zero: a finished answer without one
			// generated nothing
			usage.output(0L);
		}
		if (finished) {
			// a stream's last chunk: its finish and its counts (no event follows)
			usage.end();
		}
	}

	/**
	 * Whether an answer or chunk ends the answer: every candidate's finish, or a blocked
	 * prompt.
	 */
	private static boolean finished(JsonNode event) {
		if (Json.text(event, "promptFeedback", "blockReason") != null) {
			return true;
		}
		JsonNode candidates = Json.at(event, "candidates");
		if (candidates == null || !candidates.isArray() || candidates.isEmpty()) {
			return false;
		}
		for (JsonNode candidate : candidates.values()) {
			if (Json.text(candidate, "finishReason") == null) {
				return false;
			}
		}
		return true;
	}

}
