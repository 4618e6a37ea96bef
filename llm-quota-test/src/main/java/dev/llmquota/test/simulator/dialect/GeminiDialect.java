package dev.llmquota.test.simulator.dialect;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.llmquota.test.simulator.quota.Dimension;
import dev.llmquota.test.simulator.quota.DimensionState;
import dev.llmquota.test.simulator.quota.OutputPolicy;
import dev.llmquota.test.simulator.quota.Refusal;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Gemini API: {@code POST /v1beta/models/{model}:generateContent},
 * {@code :streamGenerateContent?alt=sse}, {@code :embedContent} and
 * {@code :batchEmbedContents}, no rate-limit headers, {@code RESOURCE_EXHAUSTED} with
 * {@code QuotaFailure} and {@code RetryInfo}.
 */
public final class GeminiDialect implements StreamingDialect {

	private static final Pattern PATH = Pattern.compile(
			"/v1(?:beta)?/models/([^/:]+?)(?::|%3[Aa])(generateContent|streamGenerateContent|embedContent|batchEmbedContents)");

	private static final Set<String> EMBEDDING_APIS = Set.of("embedContent", "batchEmbedContents");

	private static final String METRIC_PREFIX = "generativelanguage.googleapis.com/";

	@Override
	public String id() {
		return "gemini";
	}

	@Override
	public Route route(String path, Map<String, String> query) {
		Matcher matcher = PATH.matcher(path);
		if (!matcher.matches()) {
			return null;
		}
		String api = matcher.group(2);
		return new Route(PathSegments.decode(matcher.group(1)), "streamGenerateContent".equals(api), query,
				EMBEDDING_APIS.contains(api) ? Operation.EMBEDDINGS : Operation.CHAT, api);
	}

	@Override
	public CallRequest read(Route route, JsonNode body) {
		if ("embedContent".equals(route.api())) {
			return CallRequest.embedding(route, route.pathModel(), TokenCounter.heuristic(contentText(body)), 1, false,
					null);
		}
		if ("batchEmbedContents".equals(route.api())) {
			JsonNode requests = Json.requiredArray(body, "requests");
			long input = 0;
			for (JsonNode request : requests) {
				input += TokenCounter.heuristic(contentText(request));
			}
			return CallRequest.embedding(route, route.pathModel(), input, requests.size(), false, null);
		}
		if (route.stream() && !"sse".equals(route.query().get("alt"))) {
			throw new BadRequestException("This simulator serves streamGenerateContent with alt=sse only.");
		}
		JsonNode contents = Json.requiredArray(body, "contents");
		StringBuilder text = new StringBuilder(Json.text(body.path("systemInstruction").get("parts")));
		for (JsonNode content : contents) {
			text.append(Json.text(content.get("parts")));
		}
		long maxTokens = Json.optionalCount(body.get("generationConfig"), "maxOutputTokens");
		return CallRequest.generating(route, route.pathModel(), TokenCounter.heuristic(text.toString()), maxTokens,
				route.stream(), true, null);
	}

	private static String contentText(JsonNode request) {
		JsonNode parts = request.path("content").get("parts");
		if (parts == null || !parts.isArray() || parts.isEmpty()) {
			throw new BadRequestException("content.parts: at least one part is required");
		}
		return Json.text(parts);
	}

	@Override
	public OutputPolicy defaultOutputPolicy() {
		return OutputPolicy.REAL_TIME;
	}

	@Override
	public String newRequestId() {
		return UUID.randomUUID().toString().replace("-", "").substring(0, 23);
	}

	@Override
	public Map<String, String> successHeaders(CallRequest call, String requestId, Map<Dimension, DimensionState> states,
			Instant now) {
		return Map.of("vary", "Origin, X-Origin, Referer");
	}

	@Override
	public Map<String, String> garbageHeaders() {
		return Map.of("retry-after", "later", "x-goog-quota", "\u00a7\u00a7");
	}

	private static ObjectNode response(Completion completion, String text, boolean last) {
		ObjectNode body = Json.object();
		ObjectNode candidate = body.putArray("candidates").addObject();
		ObjectNode content = candidate.putObject("content");
		content.put("role", "model");
		content.putArray("parts").addObject().put("text", text);
		if (last) {
			candidate.put("finishReason", "STOP");
			ObjectNode usage = body.putObject("usageMetadata");
			usage.put("promptTokenCount", completion.inputTokens());
			usage.put("candidatesTokenCount", completion.outputTokens());
			usage.put("totalTokenCount", completion.totalTokens());
			usage.put("thoughtsTokenCount", 0);
			ObjectNode details = usage.putArray("promptTokensDetails").addObject();
			details.put("modality", "TEXT");
			details.put("tokenCount", completion.inputTokens());
		}
		candidate.put("index", 0);
		body.put("modelVersion", completion.model());
		body.put("responseId", completion.messageId());
		return body;
	}

	@Override
	public String completionBody(CallRequest call, Completion completion) {
		if ("embedContent".equals(call.api())) {
			ObjectNode body = Json.object();
			body.putObject("embedding").set("values", EmbeddingsWire.vector(0));
			return Json.write(body);
		}
		if ("batchEmbedContents".equals(call.api())) {
			ObjectNode body = Json.object();
			ArrayNode embeddings = body.putArray("embeddings");
			for (int i = 0; i < call.inputs(); i++) {
				embeddings.addObject().set("values", EmbeddingsWire.vector(i));
			}
			return Json.write(body);
		}
		return Json.write(response(completion, completion.text(), true));
	}

	@Override
	public String streamContentType() {
		return "text/event-stream";
	}

	@Override
	public List<byte[]> streamHead(CallRequest call, Completion completion) {
		return List.of();
	}

	private static byte[] sse(JsonNode data) {
		return ("data: " + Json.write(data) + "\r\n\r\n").getBytes(StandardCharsets.UTF_8);
	}

	@Override
	public byte[] streamDelta(CallRequest call, Completion completion, int position, String text) {
		return sse(response(completion, text, false));
	}

	@Override
	public List<byte[]> streamTail(CallRequest call, Completion completion, int position) {
		return List.of(sse(response(completion, "", true)));
	}

	private static Reply error(int code, String status, String message, ArrayNode details) {
		ObjectNode body = Json.object();
		ObjectNode error = body.putObject("error");
		error.put("code", code);
		error.put("message", message);
		error.put("status", status);
		if (details != null) {
			error.set("details", details);
		}
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put("content-type", "application/json; charset=UTF-8");
		headers.put("vary", "Origin, X-Origin, Referer");
		return new Reply(code, headers, Json.write(body));
	}

	@Override
	public Reply refusal(CallRequest call, Refusal refusal, Map<Dimension, DimensionState> states, String requestId,
			Instant now) {
		if (refusal.tooLarge()) {
			return tooLarge(call.model(), refusal);
		}
		return quotaError(call.model(), refusal.dimension(), refusal.limit(), refusal.retryAfter());
	}

	/**
	 * A call no wait can help is an invalid argument, not an exhausted resource.
	 */
	private static Reply tooLarge(String model, Refusal refusal) {
		Dimension dimension = refusal.dimension();
		String message = "Request too large for model " + model + ": it needs " + refusal.requested()
				+ (dimension.countsTokens() ? " tokens" : " requests") + " but the limit is " + refusal.limit()
				+ (dimension.perDay() ? " per day" : " per minute") + " (quota " + Quota.of(dimension).id()
				+ "). Reduce the input or maxOutputTokens.";
		return error(400, "INVALID_ARGUMENT", message, null);
	}

	private static Reply quotaError(String model, Dimension dimension, long limit, Duration wait) {
		Quota quota = Quota.of(dimension);
		String metric = METRIC_PREFIX + quota.metric();
		String quotaId = quota.id();
		ArrayNode details = Json.MAPPER.createArrayNode();
		ObjectNode help = details.addObject();
		help.put("@type", "type.googleapis.com/google.rpc.Help");
		ObjectNode link = help.putArray("links").addObject();
		link.put("description", "Learn more about Gemini API quotas");
		link.put("url", "https://ai.google.dev/gemini-api/docs/rate-limits");
		ObjectNode failure = details.addObject();
		failure.put("@type", "type.googleapis.com/google.rpc.QuotaFailure");
		ObjectNode violation = failure.putArray("violations").addObject();
		violation.put("quotaMetric", metric);
		violation.put("quotaId", quotaId);
		ObjectNode dimensions = violation.putObject("quotaDimensions");
		dimensions.put("location", "global");
		dimensions.put("model", model);
		violation.put("quotaValue", Long.toString(limit));
		String retry = "";
		if (wait != null) {
			details.addObject()
				.put("@type", "type.googleapis.com/google.rpc.RetryInfo")
				.put("retryDelay", Formats.ceilSeconds(wait) + "s");
			retry = "\nPlease retry in " + Formats.decimalSeconds(wait) + "s.";
		}
		String message = "You exceeded your current quota, please check your plan and billing details. For more "
				+ "information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To monitor "
				+ "your current usage, head to: https://ai.dev/rate-limit. \n* Quota exceeded for metric: " + metric
				+ ", limit: " + limit + ", model: " + model + retry;
		return error(429, "RESOURCE_EXHAUSTED", message, details);
	}

	/**
	 * A Gemini quota: its metric and its id, one per dimension.
	 */
	private record Quota(String metric, String id) {

		static Quota of(Dimension dimension) {
			// requests per minute and per day and input tokens per minute are recorded on
			// the wire; the others follow their pattern
			return switch (dimension) {
				case REQUESTS_PER_MINUTE -> new Quota("generate_content_free_tier_requests",
						"GenerateRequestsPerMinutePerProjectPerModel-FreeTier");
				case REQUESTS_PER_DAY -> new Quota("generate_content_free_tier_requests",
						"GenerateRequestsPerDayPerProjectPerModel-FreeTier");
				case INPUT_TOKENS_PER_MINUTE -> new Quota("generate_content_free_tier_input_token_count",
						"GenerateContentInputTokensPerModelPerMinute-FreeTier");
				case OUTPUT_TOKENS_PER_MINUTE -> new Quota("generate_content_free_tier_output_token_count",
						"GenerateContentOutputTokensPerModelPerMinute-FreeTier");
				case TOKENS_PER_MINUTE -> new Quota("generate_content_free_tier_token_count",
						"GenerateContentTokensPerModelPerMinute-FreeTier");
				case TOKENS_PER_DAY ->
					new Quota("generate_content_free_tier_token_count", "GenerateContentTokensPerModelPerDay-FreeTier");
				case CONCURRENT_REQUESTS -> new Quota("generate_content_free_tier_concurrent_requests",
						"GenerateContentConcurrentRequestsPerProjectPerModel-FreeTier");
			};
		}

	}

	@Override
	public Reply exhausted(CallRequest call, String requestId, Instant now) {
		return quotaError(call.model(), Dimension.REQUESTS_PER_DAY, 0, null);
	}

	@Override
	public Reply badRequest(String message, String requestId) {
		return error(400, "INVALID_ARGUMENT", message, null);
	}

	@Override
	public Reply serverError(boolean overloaded, String requestId) {
		return overloaded ? error(503, "UNAVAILABLE", "The model is overloaded. Please try again later.", null)
				: error(500, "INTERNAL", "An internal error has occurred. Please retry or report in "
						+ "https://developers.generativeai.google/guide/troubleshooting", null);
	}

}
