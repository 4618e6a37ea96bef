package dev.llmquota.test.simulator;

import java.net.http.HttpHeaders;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

import dev.llmquota.test.fixtures.RecordedFixture;
import dev.llmquota.test.simulator.clock.ManualSimClock;
import dev.llmquota.test.simulator.dialect.Json;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The simulator's answers have the structure of the recorded fixtures: field names and
 * JSON types, header names and header value formats. The fixtures are the ones this
 * module ships, read through {@link RecordedFixture}.
 */
class FixtureConformanceTests {

	/**
	 * Fields real providers send only for cache hits or thinking, which the simulator
	 * does not model.
	 */
	private static final Set<String> OPTIONAL_PATHS = Set.of("usageMetadata.cachedContentTokenCount",
			"usageMetadata.cacheTokensDetails", "usageMetadata.cacheTokensDetails[].modality",
			"usageMetadata.cacheTokensDetails[].tokenCount");

	private static final Pattern GO_DURATION = Pattern.compile("(\\d+h)?(\\d+m)?(\\d+(\\.\\d+)?s)|\\d+ms");

	private static final Pattern RFC3339 = Pattern.compile("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ");

	private static final Pattern INTEGER = Pattern.compile("\\d+");

	private final ManualSimClock clock = new ManualSimClock();

	private ProviderSimulator simulator;

	@AfterEach
	void stop() {
		this.simulator.close();
	}

	private ProviderSimulator start(ProviderSimulatorBuilder builder) {
		this.simulator = builder.clock(this.clock).latency((latency) -> latency.fixedOutputTokens(3)).start();
		return this.simulator;
	}

	/**
	 * Starts with answers as long as their ceiling, so no refund makes room for the next
	 * call.
	 */
	private ProviderSimulator startWithoutRefunds(ProviderSimulatorBuilder builder) {
		this.simulator = builder.clock(this.clock).latency((latency) -> latency.fixedOutputTokens(100_000)).start();
		return this.simulator;
	}

	@Test
	void openAiSuccessMatchesFixture() {
		start(ProviderSimulator.builder().model("gpt-4o", (l) -> l.requestsPerMinute(5000).tokensPerMinute(800_000)));
		HttpResponse<String> response = SimHttp.post(this.simulator, "/v1/chat/completions",
				SimHttp.openAi("gpt-4o", 1024, false));
		assertConforms("openai-200-with-headers.json", response, "x-ratelimit-", "openai-", "x-request-id");
	}

	@Test
	void openAiTpmRefusalMatchesFixture() {
		startWithoutRefunds(
				ProviderSimulator.builder().model("gpt-4o", (l) -> l.requestsPerMinute(500).tokensPerMinute(2000)));
		SimHttp.post(this.simulator, "/v1/chat/completions", SimHttp.openAi("gpt-4o", 1024, false));
		HttpResponse<String> response = SimHttp.post(this.simulator, "/v1/chat/completions",
				SimHttp.openAi("gpt-4o", 1024, false));
		assertConforms("openai-429-tpm.json", response, "x-ratelimit-", "openai-", "x-request-id");
		assertThat(SimHttp.json(response).at("/error/message").stringValue()).matches(
				"Rate limit reached for gpt-4o in organization \\S+ on tokens per min \\(TPM\\): Limit 2000, Used \\d+, "
						+ "Requested \\d+\\. Please try again in \\S+\\. Visit https://platform.openai.com/account/rate-limits to learn more\\.");
	}

	@Test
	void openAiInsufficientQuotaMatchesFixture() {
		start(ProviderSimulator.builder().exhausted(true));
		HttpResponse<String> response = SimHttp.post(this.simulator, "/v1/chat/completions",
				SimHttp.openAi("gpt-4o", 10, false));
		assertConforms("openai-429-insufficient-quota.json", response, "openai-", "x-request-id");
		assertThat(response.body()).isEqualTo(RecordedFixture.load("openai-429-insufficient-quota.json").body());
	}

	@Test
	void openAiStreamMatchesFixture() {
		start(ProviderSimulator.builder()
			.model("gpt-4o-mini", (l) -> l.requestsPerMinute(5000).tokensPerMinute(4_000_000)));
		HttpResponse<String> response = SimHttp.post(this.simulator, "/v1/chat/completions",
				SimHttp.openAi("gpt-4o-mini", 256, true));
		RecordedFixture fixture = RecordedFixture.load("openai-stream-usage.json");
		assertHeaders(fixture, response.headers(), "x-ratelimit-", "openai-", "x-request-id", "content-type");
		List<String> expected = dataLines(fixture.body());
		List<String> actual = dataLines(response.body());
		assertThat(actual.get(actual.size() - 1)).isEqualTo("[DONE]");
		assertSameShape(json(expected.get(0)), json(actual.get(0)));
		assertSameShape(json(expected.get(1)), json(actual.get(1)));
		assertSameShape(json(expected.get(expected.size() - 3)), json(actual.get(actual.size() - 3)));
		assertSameShape(json(expected.get(expected.size() - 2)), json(actual.get(actual.size() - 2)));
	}

	@Test
	void azureRefusalMatchesFixture() {
		startWithoutRefunds(
				ProviderSimulator.builder().model("gpt-4o", (l) -> l.requestsPerMinute(50).tokensPerMinute(1000)));
		String path = "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21";
		SimHttp.post(this.simulator, path, SimHttp.openAi("ignored", 800, false));
		HttpResponse<String> response = SimHttp.post(this.simulator, path, SimHttp.openAi("ignored", 800, false));
		assertConforms("azure-429-retry-after.json", response, "x-ratelimit-", "retry-after", "x-ms-", "apim-",
				"x-request-id");
		String message = SimHttp.json(response).at("/error/message").stringValue();
		assertThat(message).startsWith("Requests to the ChatCompletions_Create Operation under Azure OpenAI API "
				+ "version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after "
				+ response.headers().firstValue("retry-after").get() + " seconds.");
	}

	@Test
	void anthropicSuccessMatchesFixture() {
		start(ProviderSimulator.builder()
			.model("claude-sonnet-4-5",
					(l) -> l.requestsPerMinute(1000).inputTokensPerMinute(450_000).outputTokensPerMinute(90_000)));
		HttpResponse<String> response = SimHttp.post(this.simulator, "/v1/messages",
				SimHttp.anthropic("claude-sonnet-4-5", 1024, false));
		assertConforms("anthropic-200-with-headers.json", response, "anthropic-", "request-id");
		assertThat(response.headers().firstValue("anthropic-ratelimit-tokens-limit")).hasValue("540000");
	}

	@Test
	void anthropicInputRefusalMatchesFixture() {
		startWithoutRefunds(ProviderSimulator.builder()
			.model("claude-sonnet-4-5",
					(l) -> l.requestsPerMinute(50).inputTokensPerMinute(15).outputTokensPerMinute(8000)));
		SimHttp.post(this.simulator, "/v1/messages", SimHttp.anthropic("claude-sonnet-4-5", 1024, false));
		HttpResponse<String> response = SimHttp.post(this.simulator, "/v1/messages",
				SimHttp.anthropic("claude-sonnet-4-5", 1024, false));
		assertConforms("anthropic-429-input-tokens.json", response, "anthropic-", "request-id", "retry-after",
				"x-should-retry");
		assertThat(SimHttp.json(response).at("/error/message").stringValue())
			.contains("of 15 input tokens per minute. For details");
	}

	@Test
	void anthropicOverloadMatchesFixture() {
		start(ProviderSimulator.builder());
		this.simulator.faults().next(Fault.OVERLOADED);
		HttpResponse<String> response = SimHttp.post(this.simulator, "/v1/messages",
				SimHttp.anthropic("claude-sonnet-4-5", 1024, false));
		assertConforms("anthropic-529-overloaded.json", response, "request-id", "x-should-retry");
	}

	@Test
	void anthropicStreamMatchesFixture() {
		start(ProviderSimulator.builder()
			.model("claude-sonnet-4-5",
					(l) -> l.requestsPerMinute(1000).inputTokensPerMinute(450_000).outputTokensPerMinute(90_000)));
		HttpResponse<String> response = SimHttp.post(this.simulator, "/v1/messages",
				SimHttp.anthropic("claude-sonnet-4-5", 1024, true));
		RecordedFixture fixture = RecordedFixture.load("anthropic-stream-usage.json");
		assertHeaders(fixture, response.headers(), "anthropic-", "request-id", "content-type", "cache-control");
		Map<String, JsonNode> expected = eventsByType(fixture.body());
		Map<String, JsonNode> actual = eventsByType(response.body());
		assertThat(actual.keySet()).containsExactlyInAnyOrderElementsOf(expected.keySet());
		expected.forEach((type, event) -> assertSameShape(event, actual.get(type)));
		assertThat(actual.get("message_delta").at("/usage/output_tokens").asLong()).isEqualTo(3);
	}

	@Test
	void bedrockThrottlingMatchesFixture() {
		startWithoutRefunds(ProviderSimulator.builder()
			.model("us.anthropic.claude-sonnet-4-5-20250929-v1:0", (l) -> l.tokensPerMinute(1500)));
		String path = "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse";
		assertThat(SimHttp.post(this.simulator, path, SimHttp.bedrock(1024)).statusCode()).isEqualTo(200);
		HttpResponse<String> response = SimHttp.post(this.simulator, path, SimHttp.bedrock(1024));
		assertConforms("bedrock-429-throttling.json", response, "x-amzn-");
		assertThat(response.headers().firstValue("x-amzn-ErrorType"))
			.hasValue(RecordedFixture.load("bedrock-429-throttling.json").headers().get("x-amzn-errortype"));
	}

	@Test
	void bedrockQuotaExceededMatchesFixture() {
		start(ProviderSimulator.builder().exhausted(true));
		HttpResponse<String> response = SimHttp.post(this.simulator, "/model/anthropic.claude-3-5-haiku/converse",
				SimHttp.bedrock(1024));
		assertConforms("bedrock-quota-exceeded.json", response, "x-amzn-");
	}

	@Test
	void geminiSuccessMatchesFixture() {
		start(ProviderSimulator.builder());
		HttpResponse<String> response = SimHttp.post(this.simulator, "/v1beta/models/gemini-2.5-flash:generateContent",
				SimHttp.gemini(1024));
		assertConforms("gemini-200-usage.json", response);
	}

	@Test
	void geminiRefusalMatchesFixture() {
		start(ProviderSimulator.builder().model("gemini-2.5-flash", (l) -> l.requestsPerMinute(1)));
		String path = "/v1beta/models/gemini-2.5-flash:generateContent";
		SimHttp.post(this.simulator, path, SimHttp.gemini(1024));
		HttpResponse<String> response = SimHttp.post(this.simulator, path, SimHttp.gemini(1024));
		assertConforms("gemini-429-resource-exhausted.json", response, "vary");
		JsonNode violation = SimHttp.json(response).at("/error/details/1/violations/0");
		assertThat(violation.get("quotaId").stringValue())
			.isEqualTo("GenerateRequestsPerMinutePerProjectPerModel-FreeTier");
		assertThat(SimHttp.json(response).at("/error/details/2/retryDelay").stringValue()).isEqualTo("60s");
	}

	private void assertConforms(String name, HttpResponse<String> response, String... headerPrefixes) {
		RecordedFixture fixture = RecordedFixture.load(name);
		assertThat(response.statusCode()).isEqualTo(fixture.status());
		List<String> prefixes = new ArrayList<>(List.of(headerPrefixes));
		prefixes.add("content-type");
		assertHeaders(fixture, response.headers(), prefixes.toArray(String[]::new));
		assertSameShape(json(fixture.body()), SimHttp.json(response));
	}

	/**
	 * Every fixture header with one of the prefixes is present, in the same value format.
	 */
	private static void assertHeaders(RecordedFixture fixture, HttpHeaders actual, String... prefixes) {
		fixture.headers().forEach((name, value) -> {
			String lower = name.toLowerCase(java.util.Locale.ROOT);
			if (List.of(prefixes).stream().noneMatch(lower::startsWith)) {
				return;
			}
			assertThat(actual.firstValue(name)).as("header %s", name).isPresent();
			assertThat(format(actual.firstValue(name).get()))
				.as("format of header %s: %s", name, actual.firstValue(name).get())
				.isEqualTo(format(value));
		});
	}

	private static String format(String value) {
		if (INTEGER.matcher(value).matches()) {
			return "integer";
		}
		if (RFC3339.matcher(value).matches()) {
			return "rfc3339";
		}
		if (GO_DURATION.matcher(value).matches()) {
			return "go-duration";
		}
		return "text";
	}

	private static void assertSameShape(JsonNode expected, JsonNode actual) {
		Map<String, String> expectedShape = shape(expected);
		Map<String, String> actualShape = shape(actual);
		expectedShape.keySet().removeAll(OPTIONAL_PATHS);
		expectedShape.forEach((path, type) -> {
			assertThat(actualShape).as("field %s in %s", path, actual).containsKey(path);
			if (!"null".equals(type)) {
				assertThat(actualShape.get(path)).as("type of %s", path).isEqualTo(type);
			}
		});
	}

	private static Map<String, String> shape(JsonNode node) {
		Map<String, String> shape = new TreeMap<>();
		shape("", node, shape);
		return shape;
	}

	private static void shape(String path, JsonNode node, Map<String, String> shape) {
		if (node.isObject()) {
			node.forEachEntry((name, child) -> {
				String childPath = path.isEmpty() ? name : path + "." + name;
				shape.put(childPath, type(child));
				shape(childPath, child, shape);
			});
		}
		else if (node.isArray()) {
			node.forEach((child) -> shape(path + "[]", child, shape));
		}
	}

	private static String type(JsonNode node) {
		if (node.isNull()) {
			return "null";
		}
		if (node.isObject()) {
			return "object";
		}
		if (node.isArray()) {
			return "array";
		}
		if (node.isNumber()) {
			return "number";
		}
		return node.isBoolean() ? "boolean" : "string";
	}

	private static List<String> dataLines(String sse) {
		return sse.lines().filter((line) -> line.startsWith("data: ")).map((line) -> line.substring(6)).toList();
	}

	private static Map<String, JsonNode> eventsByType(String sse) {
		Map<String, JsonNode> events = new LinkedHashMap<>();
		dataLines(sse).forEach((data) -> {
			JsonNode event = json(data);
			events.putIfAbsent(event.get("type").stringValue(), event);
		});
		return events;
	}

	private static JsonNode json(String text) {
		return Json.MAPPER.readTree(text);
	}

}
