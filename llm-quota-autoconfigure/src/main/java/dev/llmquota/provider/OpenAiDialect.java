package dev.llmquota.provider;

import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import dev.llmquota.core.Dimension;
import dev.llmquota.core.ServerLimit;
import tools.jackson.databind.JsonNode;

/**
 * OpenAI's Chat Completions and Responses APIs.
 */
class OpenAiDialect implements Dialect {

	/** What {@link #readBody} reads of an answer: its usage. */
	private static final Set<String> BODY_FIELDS = Set.of("usage");

	/** The Responses stream's events whose {@code delta} is output the provider bills. */
	private static final Set<String> STREAMED_DELTAS = Set.of("response.output_text.delta", "response.refusal.delta",
			"response.function_call_arguments.delta", "response.reasoning_summary_text.delta",
			"response.reasoning_text.delta");

	private static final String[] NO_QUOTA = { "files", "uploads", "batches", "fine_tuning", "vector_stores",
			"conversations", "realtime" };

	private static final String[] NO_QUOTA_ENDINGS = { "/responses/input_tokens", "/audio/transcriptions",
			"/audio/translations", "/images/edits", "/images/variations" };

	/**
	 * Endpoints whose objects have operations of their own below them (a stored
	 * response's or completion's retrieval, cancel, update or deletion), where no model
	 * runs.
	 */
	private static final String[] STORED = { "responses", "completions" };

	private static final String[] PROMPT_CACHED = { "prompt_tokens_details", "cached_tokens" };

	private static final String[] INPUT_CACHED = { "input_tokens_details", "cached_tokens" };

	static final OpenAiDialect INSTANCE = new OpenAiDialect();

	private static final List<String> TEXT = List.of("messages", "input", "instructions", "prompt");

	private static final List<String> STRUCTURE = List.of("tools", "functions", "response_format", "text");

	private static final List<String> MESSAGES = List.of("messages", "input", "instructions");

	private static final RequestShape SHAPE = new RequestShape(TEXT, STRUCTURE, MESSAGES);

	@Override
	public DialectId id() {
		return DialectId.OPENAI;
	}

	@Override
	public String model(URI uri, JsonNode body) {
		return Json.text(body, "model");
	}

	@Override
	public Long outputCeiling(JsonNode body) {
		// When both are set the provider's admission reads the larger.
		return Json.max(Json.count(body, "max_tokens"), Json.count(body, "max_completion_tokens"),
				Json.count(body, "max_output_tokens"));
	}

	/**
	 * Chat Completions' {@code n}, and the legacy Completions' {@code best_of}, which
	 * generates that many to return {@code n} (Azure reserves by it).
	 */
	@Override
	public int choices(JsonNode body) {
		return Json.choices(Json.count(body, "n"), Json.count(body, "best_of"));
	}

	/**
	 * Files, uploads, batch jobs, fine-tuning jobs, vector stores, conversations' items,
	 * realtime sessions (their model runs over a WebSocket, not here) and the count of a
	 * Responses call's input tokens spend no model's quota, nor do a stored response's or
	 * completion's own operations ({@code responses/<id>/cancel}, a completion's metadata
	 * update), but for the compaction of a response's context, which a model runs; audio
	 * to transcribe and images to edit are uploads whose model and input llm-quota cannot
	 * read (Azure's paths too).
	 */
	@Override
	public boolean spendsQuota(String path, int below) {
		return !PathSegments.anyOf(path, below, NO_QUOTA) && !PathSegments.endsWith(path, NO_QUOTA_ENDINGS)
				&& (!PathSegments.anyOfWithMore(path, below, STORED) || path.endsWith("/responses/compact"));
	}

	/** A Responses call continuing a previous response or a conversation. */
	@Override
	public boolean storedInput(JsonNode body) {
		// an earlier response, a conversation, or a prompt template stored at OpenAI
		JsonNode conversation = Json.at(body, "conversation");
		return Json.text(body, "previous_response_id") != null || (conversation != null && !conversation.isNull())
				|| Json.text(body, "prompt", "id") != null;
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
	public boolean generates(URI uri, JsonNode body) {
		String path = uri.getRawPath();
		return path == null || !(path.endsWith("/embeddings") || path.endsWith("/moderations"));
	}

	@Override
	public List<ServerLimit> rateLimits(HeaderLookup headers, Instant now) {
		List<ServerLimit> limits = new ArrayList<>(2);
		RateLimitHeaders.read(limits, headers, Dimension.REQUESTS_PER_MINUTE, "x-ratelimit-limit-requests",
				"x-ratelimit-remaining-requests", "x-ratelimit-reset-requests", RateLimitHeaders.RELATIVE, now);
		RateLimitHeaders.read(limits, headers, Dimension.TOKENS_PER_MINUTE, "x-ratelimit-limit-tokens",
				"x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens", RateLimitHeaders.RELATIVE, now);
		return limits;
	}

	@Override
	public Set<String> bodyFields() {
		return BODY_FIELDS;
	}

	@Override
	public void readBody(JsonNode body, UsageAccumulator usage) {
		JsonNode counts = Json.at(body, "usage");
		if (counts == null || !counts.isObject()) {
			// the Responses API wraps its answer in streamed events only; bodies carry
			// usage at top level
			return;
		}
		readUsage(counts, usage);
	}

	@Override
	public boolean refusesInStream(URI uri) {
		String path = uri.getRawPath();
		return path != null && path.endsWith("/responses");
	}

	@Override
	public boolean preamble(JsonNode event) {
		String type = Json.text(event, "type");
		return "response.created".equals(type) || "response.in_progress".equals(type) || "response.queued".equals(type);
	}

	/**
	 * The Responses API's {@code response.failed}: a rate limit or a spent quota after a
	 * 200, named by {@code response.error.code}.
	 */
	@Override
	public Answer refusal(JsonNode event, Instant now) {
		if (!"response.failed".equals(Json.text(event, "type"))) {
			return null;
		}
		String code = Json.text(event, "response", "error", "code");
		String message = Json.text(event, "response", "error", "message");
		if ("insufficient_quota".equals(code)) {
			return Answer.exhausted(null, true, message);
		}
		if (!"rate_limit_exceeded".equals(code)) {
			return null;
		}
		Dimension dimension = Refusals.dimensionIn(message);
		Duration wait = Waits.fromMessage(message);
		if (dimension != null && dimension.kind() == Dimension.Kind.DAILY) {
			return Answer.exhausted(dimension, wait, message);
		}
		return Answer.rateLimited(dimension, wait, true, message);
	}

	@Override
	public void readEvent(JsonNode event, UsageAccumulator usage) {
		JsonNode counts = Json.at(event, "usage");
		if (counts != null && counts.isObject()) {
			readUsage(counts, usage);
		}
		JsonNode choices = Json.at(event, "choices");
		if (choices != null && choices.isArray()) {
			choices.values().forEach((choice) -> {
				streamed(Json.at(choice, "delta"), usage);
				// the legacy Completions API streams its text in the choice itself
				usage.outputText(Json.text(choice, "text"));
			});
		}
		String type = Json.text(event, "type");
		if (type != null && STREAMED_DELTAS.contains(type)) {
			usage.outputText(Json.text(event, "delta"));
		}
		else if ("response.failed".equals(type)) {
			usage.refusal(event);
		}
		else if ("response.completed".equals(type) || "response.incomplete".equals(type)) {
			// a Responses stream's last event, with the counts
			JsonNode responseUsage = Json.at(event, "response", "usage");
			if (responseUsage != null && responseUsage.isObject()) {
				readUsage(responseUsage, usage);
			}
			usage.end();
		}
	}

	@Override
	public Answer classify(int status, HeaderLookup headers, JsonNode body, Instant now) {
		String message = Refusals.message(body);
		String type = Json.text(body, "error", "type");
		String code = Json.text(body, "error", "code");
		if ("insufficient_quota".equals(type) || "insufficient_quota".equals(code)) {
			// credits or monthly spend: the whole organization's account, not one model
			return Answer.exhausted(null, true, message);
		}
		if (status != 429) {
			return Refusals.generic(status, headers, message, now);
		}
		if (message != null && message.startsWith("Request too large")) {
			return Answer.tooLarge(Dimension.TOKENS_PER_MINUTE, message);
		}
		Dimension dimension = Refusals.dimensionIn(message);
		if (dimension == null) {
			dimension = "tokens".equals(type) ? Dimension.TOKENS_PER_MINUTE
					: "requests".equals(type) ? Dimension.REQUESTS_PER_MINUTE : null;
		}
		Duration wait = Waits.first(Waits.fromHeaders(headers, now), Waits.fromMessage(message));
		if (dimension != null && dimension.kind() == Dimension.Kind.DAILY) {
			// a spent day, back when the provider says
			return Answer.exhausted(dimension, wait, message);
		}
		return Refusals.withResetWait(Answer.rateLimited(dimension, wait, Waits.retryAllowed(headers), message), this,
				headers, now);
	}

	/**
	 * The output a chunk's delta streams: its text, a refusal's, and the arguments of the
	 * tool calls it makes, all of which the provider bills as output.
	 */
	private static void streamed(JsonNode delta, UsageAccumulator usage) {
		if (delta == null || !delta.isObject()) {
			return;
		}
		usage.outputText(Json.text(delta, "content"));
		usage.outputText(Json.text(delta, "refusal"));
		// reasoning some OpenAI-compatible servers stream as text (DeepSeek and vLLM in
		// reasoning_content; Ollama and OpenRouter in reasoning), billed as output
		// (some send the same text under both names: counted once)
		String reasoning = Json.text(delta, "reasoning_content");
		usage.outputText((reasoning != null) ? reasoning : Json.text(delta, "reasoning"));
		usage.outputText(Json.text(delta, "function_call", "arguments"));
		JsonNode calls = Json.at(delta, "tool_calls");
		if (calls != null && calls.isArray()) {
			calls.values().forEach((call) -> usage.outputText(Json.text(call, "function", "arguments")));
		}
	}

	private static void readUsage(JsonNode counts, UsageAccumulator usage) {
		// Chat Completions: prompt/completion; Responses: input/output.
		Long input = Json.max(usage.count(counts, "prompt_tokens"), usage.count(counts, "input_tokens"));
		Long cached = Json.max(usage.count(counts, PROMPT_CACHED), usage.count(counts, INPUT_CACHED));
		Long output = Json.max(usage.count(counts, "completion_tokens"), usage.count(counts, "output_tokens"));
		usage.input(input, cached);
		usage.output(output);
	}

}
