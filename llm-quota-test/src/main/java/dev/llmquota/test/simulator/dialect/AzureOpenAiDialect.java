package dev.llmquota.test.simulator.dialect;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.llmquota.test.simulator.quota.Dimension;
import dev.llmquota.test.simulator.quota.DimensionState;
import dev.llmquota.test.simulator.quota.OutputPolicy;
import dev.llmquota.test.simulator.quota.Refusal;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Azure OpenAI deployments: {@code POST
 * /openai/deployments/{deployment}/chat/completions} and {@code .../embeddings}, the
 * deployment as model, {@code retry-after} plus {@code retry-after-ms} on 429 and the
 * string error code {@code "429"}.
 */
public final class AzureOpenAiDialect extends ChatCompletionsDialect {

	private static final Pattern PATH = Pattern.compile("/openai/deployments/([^/]+)/(chat/completions|embeddings)");

	private static final String DEFAULT_API_VERSION = "2024-10-21";

	private static final String REGION = "East US 2";

	@Override
	public String id() {
		return "azure-openai";
	}

	@Override
	public Route route(String path, Map<String, String> query) {
		Matcher matcher = PATH.matcher(path);
		if (!matcher.matches()) {
			return null;
		}
		String api = matcher.group(2);
		return new Route(PathSegments.decode(matcher.group(1)), false, query,
				"embeddings".equals(api) ? Operation.EMBEDDINGS : Operation.CHAT, api);
	}

	@Override
	public CallRequest read(Route route, JsonNode body) {
		String version = route.query().getOrDefault("api-version", DEFAULT_API_VERSION);
		return (route.operation() == Operation.EMBEDDINGS)
				? EmbeddingsWire.read(route, route.pathModel(), body, version)
				: ChatCompletionsWire.read(route, route.pathModel(), body, version);
	}

	@Override
	public OutputPolicy defaultOutputPolicy() {
		return OutputPolicy.RESERVE_AND_REFUND;
	}

	@Override
	public String newRequestId() {
		return UUID.randomUUID().toString();
	}

	private Map<String, String> baseHeaders(String deployment, String requestId) {
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put("apim-request-id", UUID.randomUUID().toString());
		headers.put("x-request-id", requestId);
		headers.put("x-ms-client-request-id", "Not-Set");
		headers.put("x-ms-region", REGION);
		if (deployment != null) {
			headers.put("x-ms-deployment-name", deployment);
		}
		return headers;
	}

	@Override
	public Map<String, String> successHeaders(CallRequest call, String requestId, Map<Dimension, DimensionState> states,
			Instant now) {
		Map<String, String> headers = baseHeaders(call.model(), requestId);
		DimensionState requests = states.get(Dimension.REQUESTS_PER_MINUTE);
		DimensionState tokens = states.get(Dimension.TOKENS_PER_MINUTE);
		if (requests != null) {
			headers.put("x-ratelimit-limit-requests", Long.toString(requests.limit()));
			headers.put("x-ratelimit-remaining-requests", Long.toString(requests.remaining()));
		}
		if (tokens != null) {
			headers.put("x-ratelimit-limit-tokens", Long.toString(tokens.limit()));
			headers.put("x-ratelimit-remaining-tokens", Long.toString(tokens.remaining()));
		}
		return headers;
	}

	@Override
	public Map<String, String> garbageHeaders() {
		return Map.of("retry-after-ms", "NaN", "x-ratelimit-remaining-tokens", "", "x-ratelimit-remaining-requests",
				"many");
	}

	@Override
	public Reply refusal(CallRequest call, Refusal refusal, Map<Dimension, DimensionState> states, String requestId,
			Instant now) {
		if (refusal.tooLarge()) {
			// waiting never helps, so no 429 and no retry-after
			String message = ChatCompletionsWire.tooLargeMessage(
					"for " + call.model() + " on " + ChatCompletionsWire.rateName(refusal.dimension()), refusal);
			return Reply.json(400, baseHeaders(call.model(), requestId),
					Json.write(ChatCompletionsWire.error(message, "invalid_request_error", "request_too_large")));
		}
		Duration wait = refusal.retryAfter();
		Map<String, String> headers = retryHeaders(call.model(), requestId, wait);
		DimensionState requests = states.get(Dimension.REQUESTS_PER_MINUTE);
		DimensionState tokens = states.get(Dimension.TOKENS_PER_MINUTE);
		if (requests != null) {
			headers.put("x-ratelimit-remaining-requests", Long.toString(requests.remaining()));
		}
		if (tokens != null) {
			headers.put("x-ratelimit-remaining-tokens", Long.toString(tokens.remaining()));
		}
		String kind = refusal.dimension().countsTokens() ? "token rate limit" : "call rate limit";
		return Reply.json(429, headers, error(call, kind, "OpenAI S0", Formats.ceilSeconds(wait),
				"Please go here: https://aka.ms/oai/quotaincrease if you would like to further increase the default rate limit."));
	}

	private Map<String, String> retryHeaders(String deployment, String requestId, Duration wait) {
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put("retry-after", Long.toString(Formats.ceilSeconds(wait)));
		headers.put("retry-after-ms", Long.toString(Formats.ceilMillis(wait)));
		headers.putAll(baseHeaders(deployment, requestId));
		return headers;
	}

	private static String error(CallRequest call, String kind, String tier, long seconds, String tail) {
		String version = (call.apiVersion() != null) ? call.apiVersion() : DEFAULT_API_VERSION;
		String operation = (call.operation() == Operation.EMBEDDINGS) ? "Embeddings_Create" : "ChatCompletions_Create";
		String message = "Requests to the " + operation + " Operation under Azure OpenAI API version " + version
				+ " have exceeded " + kind + " of your current " + tier + " pricing tier. Please retry after " + seconds
				+ " seconds. " + tail;
		return errorBody("429", message);
	}

	private static String errorBody(String code, String message) {
		ObjectNode body = Json.object();
		ObjectNode error = body.putObject("error");
		error.put("code", code);
		error.put("message", message);
		return Json.write(body);
	}

	@Override
	public Reply exhausted(CallRequest call, String requestId, Instant now) {
		Duration day = Duration.ofDays(1);
		return Reply.json(429, retryHeaders(call.model(), requestId, day), error(call, "token rate limit",
				"AIServices S0", day.toSeconds(),
				"Please contact Azure support service if you would like to further increase the default rate limit."));
	}

	@Override
	public Reply badRequest(String message, String requestId) {
		ObjectNode body = Json.object();
		ObjectNode error = body.putObject("error");
		error.put("message", message);
		error.put("type", "invalid_request_error");
		error.putNull("param");
		error.putNull("code");
		return Reply.json(400, baseHeaders(null, requestId), Json.write(body));
	}

	@Override
	public Reply serverError(boolean overloaded, String requestId) {
		return overloaded
				? Reply.json(503, baseHeaders(null, requestId),
						errorBody("ServiceUnavailable", "The service is temporarily unable to process your request."))
				: Reply.json(500, baseHeaders(null, requestId),
						errorBody("InternalServerError", "The server had an error processing your request."));
	}

}
