package dev.llmquota.provider;

import java.net.URI;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import dev.llmquota.core.Dimension;
import tools.jackson.databind.JsonNode;

/**
 * AWS Bedrock's Converse API: the model id in the path; no rate-limit headers.
 */
final class BedrockDialect implements Dialect {

	/**
	 * What {@link #readBody} reads of an answer: its usage, or a Titan embedding's count.
	 */
	private static final Set<String> BODY_FIELDS = Set.of("usage", "inputTextTokenCount");

	static final BedrockDialect INSTANCE = new BedrockDialect();

	/**
	 * Converse's, and InvokeModel's model bodies: Anthropic's (system, messages), Titan's
	 * (inputText), Cohere's embeddings (texts), Llama's and Mistral's (prompt).
	 */
	private static final List<String> TEXT = List.of("system", "messages", "inputText", "texts", "prompt");

	/** Converse's tools, and those of an Anthropic body. */
	private static final List<String> STRUCTURE = List.of("toolConfig", "tools", "tool_choice");

	private static final List<String> MESSAGES = List.of("system", "messages");

	private static final RequestShape SHAPE = new RequestShape(TEXT, STRUCTURE, MESSAGES);

	@Override
	public DialectId id() {
		return DialectId.BEDROCK;
	}

	@Override
	public String model(URI uri, JsonNode body) {
		List<String> segments = PathSegments.of(uri);
		int index = segments.indexOf("model");
		return (index >= 0 && index + 1 < segments.size()) ? segments.get(index + 1) : null;
	}

	@Override
	public Long outputCeiling(JsonNode body) {
		// Converse, or a model's own body sent through InvokeModel: Anthropic's, Llama's,
		// Titan's, Nova's
		Long converse = Json.max(Json.count(body, "inferenceConfig", "maxTokens"), Json.count(body, "max_tokens"));
		return Json.max(converse,
				Json.max(Json.count(body, "max_gen_len"), Json.count(body, "textGenerationConfig", "maxTokenCount"),
						Json.count(body, "inferenceConfig", "max_new_tokens")));
	}

	@Override
	public RequestShape requestShape() {
		return SHAPE;
	}

	@Override
	public boolean generates(URI uri, JsonNode body) {
		// embedding models (Titan, Cohere), called through InvokeModel, generate nothing
		String model = model(uri, body);
		return model == null || !model.toLowerCase(Locale.ROOT).contains("embed");
	}

	@Override
	public void readHeaders(HeaderLookup headers, UsageAccumulator usage) {
		// InvokeModel reports its counts in headers, whatever the model's body says
		usage.input(RateLimitHeaders.count(headers.get("x-amzn-bedrock-input-token-count")), null);
		usage.output(RateLimitHeaders.count(headers.get("x-amzn-bedrock-output-token-count")));
	}

	/** CountTokens spends no model's quota. */
	@Override
	public boolean spendsQuota(String path, int below) {
		return !path.endsWith("/count-tokens");
	}

	@Override
	public boolean streaming(URI uri, JsonNode body) {
		String path = uri.getRawPath();
		return path != null && (path.endsWith("/converse-stream") || path.endsWith("/invoke-with-response-stream"));
	}

	@Override
	public Framing framing(boolean streaming) {
		// ConverseStream and InvokeModelWithResponseStream are AWS's binary event stream
		return streaming ? Framing.EVENT_STREAM : Framing.JSON;
	}

	@Override
	public Set<String> bodyFields() {
		return BODY_FIELDS;
	}

	@Override
	public void readBody(JsonNode body, UsageAccumulator usage) {
		JsonNode counts = Json.at(body, "usage");
		if (usage.count(body, "inputTextTokenCount") != null) {
			// Titan embeddings through InvokeModel
			usage.input(usage.count(body, "inputTextTokenCount"), null);
			return;
		}
		if (counts == null || !counts.isObject()
				|| (usage.count(counts, "inputTokens") == null && usage.count(counts, "outputTokens") == null)) {
			// InvokeModel with an Anthropic body: snake_case usage
			AnthropicDialect.INSTANCE.readBody(body, usage);
			return;
		}
		// Converse names the prompt cache's counts ...Tokens; Nova's own bodies
		// ...TokenCount, as the invocation metrics do
		Long input = usage.count(counts, "inputTokens");
		Long read = Json.max(usage.count(counts, "cacheReadInputTokens"),
				usage.count(counts, "cacheReadInputTokenCount"));
		Long written = Json.max(usage.count(counts, "cacheWriteInputTokens"),
				usage.count(counts, "cacheWriteInputTokenCount"));
		usage.inputParts(input, read, written);
		usage.output(usage.count(counts, "outputTokens"));
	}

	@Override
	public Answer classify(int status, HeaderLookup headers, JsonNode body, Instant now) {
		String message = Refusals.message(body);
		String error = headers.get("x-amzn-ErrorType");
		if (error == null) {
			error = Json.text(body, "__type");
		}
		String type = (error != null) ? error : "";
		if (type.contains("ServiceQuotaExceededException")) {
			return Answer.exhausted(null, false, message);
		}
		if (type.contains("ModelNotReadyException")) {
			// a 429 too (AWS documents it so): the model is still loading, no quota of
			// the account's is spent
			return Answer.overloaded(null, true, message);
		}
		if (type.contains("ThrottlingException") || status == 429) {
			Dimension dimension = Refusals.dimensionIn(message);
			if (dimension != null && dimension.kind() == Dimension.Kind.DAILY) {
				return Answer.exhausted(dimension, false, message);
			}
			return Answer.rateLimited(dimension, Waits.fromHeaders(headers, now), true, message);
		}
		if (type.contains("ServiceUnavailableException")) {
			return Answer.overloaded(null, true, message);
		}
		return Refusals.generic(status, headers, message, now);
	}

	/**
	 * Reads one event of a binary stream, keyed by its event type: ConverseStream's
	 * {@code contentBlockDelta} and {@code metadata} (the only place its usage is), or
	 * InvokeModelWithResponseStream's {@code chunk}, whose bytes are the model's own
	 * stream event, the last one carrying {@code amazon-bedrock-invocationMetrics}.
	 */
	@Override
	public void readEvent(JsonNode event, UsageAccumulator usage) {
		usage.outputText(Json.text(event, "contentBlockDelta", "delta", "text"));
		usage.outputText(Json.text(event, "contentBlockDelta", "delta", "toolUse", "input"));
		usage.outputText(Json.text(event, "contentBlockDelta", "delta", "reasoningContent", "text"));
		JsonNode counts = Json.at(event, "metadata", "usage");
		if (counts != null && counts.isObject()) {
			Long read = usage.count(counts, "cacheReadInputTokens");
			Long written = usage.count(counts, "cacheWriteInputTokens");
			usage.inputParts(usage.count(counts, "inputTokens"), read, written);
			usage.output(usage.count(counts, "outputTokens"));
			// Converse's last event: its counts follow messageStop
			usage.end();
		}
		String bytes = Json.text(event, "chunk", "bytes");
		if (bytes != null) {
			JsonNode chunk = ResponseReader.json(Base64.getMimeDecoder().decode(bytes));
			JsonNode metrics = Json.at(chunk, "amazon-bedrock-invocationMetrics");
			if (metrics != null && metrics.isObject()) {
				// inputTokenCount is the input outside the prompt cache alone
				Long read = usage.count(metrics, "cacheReadInputTokenCount");
				Long written = usage.count(metrics, "cacheWriteInputTokenCount");
				usage.inputParts(usage.count(metrics, "inputTokenCount"), read, written);
				usage.output(usage.count(metrics, "outputTokenCount"));
				// the invocation's metrics come with its last chunk
				usage.end();
			}
			else if (chunk != null) {
				// the model's native stream: Anthropic's message_start and message_delta
				AnthropicDialect.INSTANCE.readEvent(chunk, usage);
			}
		}
	}

}
