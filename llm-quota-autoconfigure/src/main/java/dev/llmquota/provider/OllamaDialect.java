package dev.llmquota.provider;

import java.net.URI;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

import tools.jackson.databind.JsonNode;

/**
 * Ollama's chat and generate APIs: streams by default, as one JSON object per line.
 */
final class OllamaDialect implements Dialect {

	private static final String[] NO_MODEL = { "/api/show", "/api/pull", "/api/push", "/api/create", "/api/copy",
			"/api/delete" };

	static final OllamaDialect INSTANCE = new OllamaDialect();

	private static final List<String> TEXT = List.of("system", "messages", "prompt", "input");

	private static final List<String> STRUCTURE = List.of("tools", "format");

	private static final List<String> MESSAGES = List.of("system", "messages", "prompt");

	private static final RequestShape SHAPE = new RequestShape(TEXT, STRUCTURE, MESSAGES);

	@Override
	public DialectId id() {
		return DialectId.OLLAMA;
	}

	/**
	 * Ollama's cloud answers a spent session, hourly or weekly allowance with a 429 that
	 * speaks of its usage limit ("you've reached your weekly usage limit, please wait or
	 * upgrade to continue"): a spent quota, never retried; other 429s are rate limits.
	 */
	@Override
	public Answer classify(int status, HeaderLookup headers, JsonNode body, Instant now) {
		String message = Refusals.message(body);
		if (status == 429 && message != null && message.toLowerCase(Locale.ROOT).contains("usage limit")) {
			return Answer.exhausted(null, false, message);
		}
		return Refusals.generic(status, headers, message, now);
	}

	@Override
	public String model(URI uri, JsonNode body) {
		return Json.text(body, "model");
	}

	@Override
	public Long outputCeiling(JsonNode body) {
		// -1 (Ollama's default) and -2 mean no ceiling: the count reader leaves them out;
		// its OpenAI-compatible API takes OpenAI's fields
		return Json.max(Json.count(body, "options", "num_predict"), Json.count(body, "max_tokens"),
				Json.count(body, "max_completion_tokens"));
	}

	/**
	 * Showing, pulling, pushing, creating, copying and deleting models and uploading
	 * blobs run no model.
	 */
	@Override
	public boolean spendsQuota(String path, int below) {
		return !PathSegments.endsWith(path, NO_MODEL) && !path.contains("/api/blobs/");
	}

	/**
	 * Ollama serves OpenAI's API under {@code /v1/} on the same port (Spring AI's OpenAI
	 * model pointed at Ollama calls it): OpenAI's request fields, its SSE streams and its
	 * {@code usage}, which Ollama's own reading would not find.
	 */
	@Override
	public Dialect at(String path, int below) {
		return path.startsWith("/v1/", below) ? OpenAiDialect.INSTANCE : this;
	}

	@Override
	public RequestShape requestShape() {
		return SHAPE;
	}

	@Override
	public boolean streaming(URI uri, JsonNode body) {
		// Ollama streams unless told not to
		return Json.flag(body, "stream", true);
	}

	@Override
	public boolean generates(URI uri, JsonNode body) {
		String path = uri.getRawPath();
		return path == null || !(path.endsWith("/api/embed") || path.endsWith("/api/embeddings"));
	}

	@Override
	public Framing framing(boolean streaming) {
		return streaming ? Framing.NDJSON : Framing.JSON;
	}

	@Override
	public void readBody(JsonNode body, UsageAccumulator usage) {
		readEvent(body, usage);
	}

	@Override
	public void readEvent(JsonNode event, UsageAccumulator usage) {
		usage.outputText(Json.text(event, "message", "content"));
		usage.outputText(Json.text(event, "response"));
		usage.input(usage.count(event, "prompt_eval_count"), null);
		usage.output(usage.count(event, "eval_count"));
		if (Json.flag(event, "done", false)) {
			// the last line, with the counts
			usage.end();
		}
	}

}
