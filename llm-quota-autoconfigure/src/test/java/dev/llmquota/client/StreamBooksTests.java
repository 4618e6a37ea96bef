package dev.llmquota.client;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.Dimension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.http.MediaType;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What a streamed answer leaves in the books when it does not end as its dialect ends a
 * stream, or reports usage no call can have.
 */
@ExtendWith(OutputCaptureExtension.class)
class StreamBooksTests {

	private static final Duration PATIENCE = Duration.ofSeconds(10);

	/**
	 * A stream the provider ended without its final event (an error event after the 200,
	 * or a stream closed before its last chunk): the provider may have generated more
	 * than went by, and what went by says nothing of it; its reservation stands, as for a
	 * stream cut short.
	 */
	@ParameterizedTest(name = "{0}")
	@MethodSource("streamsWithoutTheirEnd")
	void aStreamThatEndsWithoutItsFinalEventKeepsItsReservation(String dialect, String path, String contentType,
			Map<String, Object> request, String stream) {
		assertReservationStands(dialect, path, contentType, request, stream);
	}

	static List<Arguments> streamsWithoutTheirEnd() {
		return List.of(Arguments.of("anthropic", "/v1/messages", "text/event-stream",
				Map.of("model", "m", "max_tokens", 4_000, "stream", true, "messages",
						List.of(Map.of("role", "user", "content", "Hi"))),
				"event: message_start\r\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5,"
						+ "\"output_tokens\":1}}}\r\n\r\nevent: content_block_delta\r\ndata: {\"type\":\"content_block_delta\","
						+ "\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\r\n\r\nevent: error\r\n"
						+ "data: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"
						+ "\r\n\r\n"),
				Arguments.of("openai", "/v1/chat/completions", "text/event-stream",
						Map.of("model", "m", "max_tokens", 4_000, "stream", true),
						"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"}}]}\n\n"
								+ "data: {\"error\":{\"message\":\"The server had an error while processing your request.\","
								+ "\"type\":\"server_error\"}}\n\n"),
				Arguments.of("gemini", "/v1beta/models/m:streamGenerateContent?alt=sse", "text/event-stream",
						Map.of("contents", List.of(Map.of("parts", List.of(Map.of("text", "Hi")))), "generationConfig",
								Map.of("maxOutputTokens", 4_000)),
						"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hel\"}],\"role\":\"model\"}}],"
								+ "\"usageMetadata\":{\"promptTokenCount\":5,\"candidatesTokenCount\":1,\"totalTokenCount\":6}}"
								+ "\r\n\r\n"),
				Arguments.of("ollama", "/api/chat", "application/x-ndjson",
						Map.of("model", "m", "options", Map.of("num_predict", 4_000), "messages",
								List.of(Map.of("role", "user", "content", "Hi"))),
						"{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"Hel\"},\"done\":false}\n"
								+ "{\"error\":\"an error was encountered while running the model\"}\n"));
	}

	/**
	 * A stream whose usage holds a count no provider reports (negative, a fraction past
	 * what a long holds, a string): the count is unreadable, and the call keeps its
	 * reservation, as one with a count over a billion does; it is not taken for a stream
	 * without usage, charged the little text that went by.
	 */
	@ParameterizedTest(name = "{0}: {1}")
	@MethodSource("unreadableCounts")
	void aStreamWhoseUsageCountIsUnreadableKeepsItsReservation(String dialect, String count, String path,
			String contentType, Map<String, Object> request, String stream) {
		assertReservationStands(dialect, path, contentType, request, stream);
	}

	static List<Arguments> unreadableCounts() {
		Map<String, Object> chat = Map.of("model", "m", "max_tokens", 4_000, "stream", true);
		Map<String, Object> gemini = Map.of("contents", List.of(Map.of("parts", List.of(Map.of("text", "Hi")))),
				"generationConfig", Map.of("maxOutputTokens", 4_000));
		String geminiAnswer = "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi\"}],\"role\":\"model\"},"
				+ "\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":5,\"candidatesTokenCount\":%s}}";
		return List.of(
				Arguments.of("openai", "-1", "/v1/chat/completions", "text/event-stream", chat, openAiStream("-1")),
				Arguments.of("openai", "\"2500\"", "/v1/chat/completions", "text/event-stream", chat,
						openAiStream("\"2500\"")),
				Arguments.of("openai", "1e30", "/v1/chat/completions", "text/event-stream", chat, openAiStream("1e30")),
				Arguments.of("gemini", "-1", "/v1beta/models/m:streamGenerateContent?alt=sse", "text/event-stream",
						gemini, "data: " + geminiAnswer.formatted("-1") + "\n\n"),
				Arguments.of("gemini", "\"2500\"", "/v1beta/models/m:generateContent", "application/json", gemini,
						geminiAnswer.formatted("\"2500\"")));
	}

	/**
	 * A stream whose usage reports far more output than the call could generate (900
	 * million tokens for a call whose ceiling is 4,000): believed, it puts the pool into
	 * a debt its refill takes two months to repay, and every later call waits on it.
	 */
	@Test
	void aStreamReportingFarMoreOutputThanItsCeilingDoesNotHoldThePoolForMonths() {
		String stream = openAiStream("900000000");
		try (LoopbackServer server = new LoopbackServer(200, Map.of("content-type", "text/event-stream"), stream);
				GovernedApp app = GovernedApp.start("llm.quota.providers.p.base-url=" + server.baseUrl(),
						"llm.quota.providers.p.dialect=openai", "llm.quota.headroom=1.0",
						"llm.quota.providers.p.burst-window=60s",
						"llm.quota.providers.p.models.m.tokens-per-minute=10000")) {
			app.webClient()
				.post()
				.uri(server.baseUrl() + "/v1/chat/completions")
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue(Map.of("model", "m", "max_tokens", 4_000, "stream", true))
				.retrieve()
				.bodyToMono(String.class)
				.block(PATIENCE);
			await().atMost(PATIENCE).until(() -> app.engine().inFlight(app.engine().pool("p", "m").account()) == 0);
			assertThat(app.engine()
				.snapshot(app.engine().pool("p", "m"))
				.bucket(BucketSpec.Scope.POOL, Dimension.TOKENS_PER_MINUTE)
				.remaining()).as("at most the call's reservation is kept")
				.isGreaterThanOrEqualTo(10_000L - 4_000L - 100L);
		}
	}

	/**
	 * An OpenAI stream without usage (add-stream-usage off) is estimated from its text
	 * for the token rates, but its budget keeps what it reserved: a reasoning model bills
	 * output the text never shows, up to max_completion_tokens.
	 */
	@Test
	void aStreamWithoutUsageKeepsItsBudgetReservationWhileItsTokenRatesFollowItsText(CapturedOutput output) {
		String stream = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Yes.\"}}]}\n\n"
				+ "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
		try (LoopbackServer server = new LoopbackServer(200, Map.of("content-type", "text/event-stream"), stream);
				GovernedApp app = GovernedApp.start("llm.quota.providers.p.base-url=" + server.baseUrl(),
						"llm.quota.providers.p.dialect=openai", "llm.quota.headroom=1.0",
						"llm.quota.providers.p.burst-window=60s", "llm.quota.providers.p.budget.per-day=1.00",
						"llm.quota.providers.p.models.o3.tokens-per-minute=100000",
						"llm.quota.providers.p.models.o3.cost.input-per-million=2",
						"llm.quota.providers.p.models.o3.cost.output-per-million=8")) {
			app.webClient()
				.post()
				.uri(server.baseUrl() + "/v1/chat/completions")
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue(Map.of("model", "o3", "max_completion_tokens", 50_000, "stream", true, "messages",
						List.of(Map.of("role", "user", "content", "Is 2^61-1 prime?"))))
				.retrieve()
				.bodyToMono(String.class)
				.block(PATIENCE);
			await().atMost(PATIENCE).until(() -> app.engine().inFlight(app.engine().pool("p", "o3").account()) == 0);
			assertThat(1_000_000 - app.engine()
				.snapshot(app.engine().pool("p", "o3"))
				.bucket(BucketSpec.Scope.ACCOUNT, Dimension.BUDGET_PER_DAY)
				.remaining()).as("50,000 output tokens at 8 a million, reserved and kept")
				.isGreaterThanOrEqualTo(400_000);
			assertThat(app.engine()
				.snapshot(app.engine().pool("p", "o3"))
				.bucket(BucketSpec.Scope.POOL, Dimension.TOKENS_PER_MINUTE)
				.remaining()).as("the token rate follows the text").isGreaterThan(100_000L - 1_000L);
			assertThat(output).contains("llm.quota.providers.p.add-stream-usage: true");
		}
	}

	private static String openAiStream(String completionTokens) {
		return "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"}}],\"usage\":null}\n\n"
				+ "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":" + completionTokens
				+ "}}\n\ndata: [DONE]\n\n";
	}

	private static void assertReservationStands(String dialect, String path, String contentType,
			Map<String, Object> request, String stream) {
		try (LoopbackServer server = new LoopbackServer(200, Map.of("content-type", contentType), stream);
				GovernedApp app = GovernedApp.start("llm.quota.providers.p.base-url=" + server.baseUrl(),
						"llm.quota.providers.p.dialect=" + dialect, "llm.quota.headroom=1.0",
						"llm.quota.providers.p.burst-window=60s",
						"llm.quota.providers.p.models.m.tokens-per-minute=10000")) {
			assertThat(app.webClient()
				.post()
				.uri(server.baseUrl() + path)
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue(request)
				.retrieve()
				.bodyToMono(String.class)
				.block(PATIENCE)).isEqualTo(stream);
			await().atMost(PATIENCE).until(() -> app.engine().inFlight(app.engine().pool("p", "m").account()) == 0);
			assertThat(app.engine()
				.snapshot(app.engine().pool("p", "m"))
				.bucket(BucketSpec.Scope.POOL, Dimension.TOKENS_PER_MINUTE)
				.remaining()).as("the output ceiling stands (what refills in 12 s, at 167 a second, aside)")
				.isLessThan(10_000L - 4_000L + 2_000L);
		}
	}

}
