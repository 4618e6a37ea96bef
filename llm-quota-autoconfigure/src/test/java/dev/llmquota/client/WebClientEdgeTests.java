package dev.llmquota.client;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

import dev.llmquota.LlmQuota;
import dev.llmquota.QuotaEngineClosedException;
import dev.llmquota.QuotaExhaustedException;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.Priority;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.test.simulator.Fault;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.NettyDataBuffer;
import org.springframework.core.io.buffer.NettyDataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ClientHttpConnector;
import org.springframework.mock.http.client.reactive.MockClientHttpRequest;
import org.springframework.mock.http.client.reactive.MockClientHttpResponse;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

/**
 * What a governed call must survive: bytes that must not change, bodies nobody reads,
 * shutdown, and bad input of every kind.
 */
class WebClientEdgeTests {

	private static final Duration PATIENCE = Duration.ofSeconds(10);

	private static final String SSE = """
			data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hel"}}],"usage":null}

			data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"lo"}}],"usage":null}

			data: {"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":2,"total_tokens":14}}

			data: [DONE]

			""";

	@Test
	void theRequestIsSentAndTheAnswerReceivedByteForByte() {
		try (LoopbackServer server = new LoopbackServer(200, Map.of("content-type", "text/event-stream"), SSE);
				GovernedApp app = GovernedApp.start("llm.quota.providers.p.base-url=" + server.baseUrl(),
						"llm.quota.providers.p.models.gpt-4o.tokens-per-minute=100000")) {
			Map<String, Object> body = new LinkedHashMap<>();
			body.put("model", "gpt-4o");
			body.put("stream", true);
			body.put("max_tokens", 500);
			body.put("messages", List.of(Map.of("role", "user", "content", "Grüße, \"quoted\" ✓")));
			byte[] received = DataBufferUtils
				.join(app.webClient()
					.post()
					.uri(server.baseUrl() + "/v1/chat/completions")
					.contentType(MediaType.APPLICATION_JSON)
					.bodyValue(body)
					.retrieve()
					.bodyToFlux(DataBuffer.class))
				.map((buffer) -> {
					byte[] bytes = new byte[buffer.readableByteCount()];
					buffer.read(bytes);
					DataBufferUtils.release(buffer);
					return bytes;
				})
				.block(PATIENCE);
			assertThat(new String(received, StandardCharsets.UTF_8)).isEqualTo(SSE);
			assertThat(server.requests()).singleElement()
				.satisfies((sent) -> assertThat(sent).isEqualTo(JsonMapper.shared().writeValueAsBytes(body)));
			await().atMost(PATIENCE)
				.until(() -> app.engine().inFlight(app.engine().pool("p", "gpt-4o").account()) == 0);
			long remaining = app.engine()
				.snapshot(app.engine().pool("p", "gpt-4o"))
				.bucket(BucketSpec.Scope.POOL, Dimension.TOKENS_PER_MINUTE)
				.remaining();
			// 2 s of 80,000 a minute, less the 12 + 2 tokens the stream reported
			assertThat(remaining).isBetween(2_666L - 14, 2_666L);
		}
	}

	@Test
	void aBodyThatIsNotJsonIsSentUnchangedAndEstimatedByItsLength() {
		try (LoopbackServer server = new LoopbackServer(400, Map.of("content-type", "application/json"),
				"{\"error\":{\"message\":\"bad\"}}");
				GovernedApp app = GovernedApp.start("llm.quota.providers.p.base-url=" + server.baseUrl())) {
			String answer = app.webClient()
				.post()
				.uri(server.baseUrl() + "/v1/chat/completions")
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue("this is { not json")
				.exchangeToMono((response) -> response.bodyToMono(String.class))
				.block(PATIENCE);
			assertThat(answer).isEqualTo("{\"error\":{\"message\":\"bad\"}}");
			assertThat(new String(server.requests().get(0), StandardCharsets.UTF_8)).isEqualTo("this is { not json");
			assertThat(app.engine().pools()).extracting((pool) -> pool.model()).contains("unknown");
		}
	}

	@Test
	void addsStreamUsageOnlyWhenAskedTo() {
		try (LoopbackServer server = new LoopbackServer(200, Map.of("content-type", "text/event-stream"), SSE);
				GovernedApp app = GovernedApp.start("llm.quota.providers.p.base-url=" + server.baseUrl(),
						"llm.quota.providers.p.add-stream-usage=true")) {
			Map<String, Object> body = Map.of("model", "gpt-4o", "stream", true, "messages",
					List.of(Map.of("role", "user", "content", "Hi")));
			app.webClient()
				.post()
				.uri(server.baseUrl() + "/v1/chat/completions")
				.bodyValue(body)
				.retrieve()
				.bodyToMono(String.class)
				.block(PATIENCE);
			JsonNode sent = JsonMapper.shared().readTree(server.requests().get(0));
			assertThat(sent.path("stream_options").path("include_usage").asBoolean()).isTrue();
		}
	}

	/**
	 * A Responses stream carries its usage in its last event, and the API knows no
	 * include_usage: the call goes as written, never refused for an option it added.
	 */
	@Test
	void addsNoStreamUsageToAResponsesCall() {
		try (LoopbackServer server = new LoopbackServer(200, Map.of("content-type", "text/event-stream"), SSE);
				GovernedApp app = GovernedApp.start("llm.quota.providers.p.base-url=" + server.baseUrl(),
						"llm.quota.providers.p.add-stream-usage=true")) {
			app.webClient()
				.post()
				.uri(server.baseUrl() + "/v1/responses")
				.bodyValue(Map.of("model", "gpt-4o", "stream", true, "input", "Hi"))
				.retrieve()
				.bodyToMono(String.class)
				.block(PATIENCE);
			JsonNode sent = JsonMapper.shared().readTree(server.requests().get(0));
			assertThat(sent.has("stream_options")).isFalse();
		}
	}

	/**
	 * A 429's headers say what the provider has left without the call it refused: the
	 * books end there, the refused call's reservation given back before they correct
	 * them, not on top of them.
	 */
	@Test
	void aRefusalsHeadersCorrectTheBooksAfterItsReservationIsBack() {
		try (LoopbackServer server = new LoopbackServer(429,
				Map.of("content-type", "application/json", "retry-after", "20", "x-ratelimit-limit-tokens", "60000",
						"x-ratelimit-remaining-tokens", "20000", "x-ratelimit-reset-tokens", "40s"),
				"{\"error\":{\"message\":\"Rate limit reached for gpt-4o on tokens per min (TPM)\","
						+ "\"type\":\"tokens\",\"code\":\"rate_limit_exceeded\"}}");
				GovernedApp app = GovernedApp.start("llm.quota.providers.p.base-url=" + server.baseUrl(),
						"llm.quota.providers.p.dialect=openai", "llm.quota.headroom=0.8",
						"llm.quota.providers.p.burst-window=60s",
						"llm.quota.providers.p.models.m.tokens-per-minute=60000", "llm.quota.max-wait=1s")) {
			assertThatException().isThrownBy(() -> app.webClient()
				.post()
				.uri(server.baseUrl() + "/v1/chat/completions")
				.bodyValue(Map.of("model", "m", "max_tokens", 4_000, "messages",
						List.of(Map.of("role", "user", "content", "Hi"))))
				.retrieve()
				.bodyToMono(String.class)
				.block(PATIENCE));
			await().atMost(PATIENCE).until(() -> app.engine().inFlight(app.engine().pool("p", "m").account()) == 0);
			assertThat(app.engine()
				.snapshot(app.engine().pool("p", "m"))
				.bucket(BucketSpec.Scope.POOL, Dimension.TOKENS_PER_MINUTE)
				.remaining()).as("20,000 left, less the 12,000 kept for others (and what refilled since, 800 a second)")
				.isBetween(8_000L, 10_000L);
		}
	}

	@Test
	void aBodyNobodyReadsGivesItsSlotsBackAfterTheLeaseTimeout() {
		try (LoopbackServer server = new LoopbackServer(200, Map.of("content-type", "application/json"),
				"{\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1}}");
				GovernedApp app = GovernedApp.start("llm.quota.providers.p.base-url=" + server.baseUrl(),
						"llm.quota.lease-timeout=1s", "llm.quota.providers.p.models.m.concurrent-requests=5")) {
			app.webClient()
				.post()
				.uri(server.baseUrl() + "/v1/chat/completions")
				.bodyValue(Map.of("model", "m"))
				.retrieve()
				.toEntityFlux(DataBuffer.class)
				.block(PATIENCE);
			assertThat(app.engine().inFlight(app.engine().pool("p", "m").account())).isEqualTo(1);
			await().atMost(PATIENCE).until(() -> app.engine().inFlight(app.engine().pool("p", "m").account()) == 0);
		}
	}

	@Test
	void closingTheApplicationFailsWaitingCallsAndReleasesEverySlot() {
		try (LoopbackServer server = new LoopbackServer(200, Map.of("content-type", "application/json"), "{}")) {
			GovernedApp app = GovernedApp.start("llm.quota.providers.p.base-url=" + server.baseUrl(),
					"llm.quota.providers.p.models.m.requests-per-minute=1", "llm.quota.max-wait=1m");
			WebClient client = app.webClient();
			Mono<String> call = client.post()
				.uri(server.baseUrl() + "/v1/chat/completions")
				.bodyValue(Map.of("model", "m"))
				.retrieve()
				.bodyToMono(String.class);
			call.block(PATIENCE);
			var waiting = call.toFuture();
			QuotaEngine engine = app.engine();
			await().atMost(PATIENCE).until(() -> engine.waiting(engine.pool("p", "m").account()) == 1);
			app.close();
			assertThatException().isThrownBy(waiting::join).withCauseInstanceOf(QuotaEngineClosedException.class);
			assertThat(engine.inFlight(engine.pool("p", "m").account())).isZero();
		}
	}

	@Test
	void attributesChooseTheModelProviderPriorityAndWait() {
		try (LoopbackServer server = new LoopbackServer(200, Map.of("content-type", "application/json"), "{}");
				GovernedApp app = GovernedApp.start("llm.quota.providers.a.base-url=" + server.baseUrl(),
						"llm.quota.providers.b.base-url=http://127.0.0.1:1",
						"llm.quota.providers.b.models.reports.requests-per-minute=600")) {
			app.webClient()
				.post()
				.uri(server.baseUrl() + "/v1/chat/completions")
				.attribute(LlmQuota.PROVIDER, "b")
				.attribute(LlmQuota.MODEL, "reports")
				.attribute(LlmQuota.PRIORITY, Priority.BATCH)
				.attribute(LlmQuota.MAX_WAIT, Duration.ofSeconds(1))
				.bodyValue(Map.of("model", "gpt-4o"))
				.retrieve()
				.bodyToMono(String.class)
				.block(PATIENCE);
			assertThat(app.engine()
				.snapshot(app.engine().pool("b", "reports"))
				.bucket(BucketSpec.Scope.POOL, Dimension.REQUESTS_PER_MINUTE)
				.remaining()).isEqualTo(15);
		}
	}

	@Test
	void aMatchHeaderTellsAccountsBehindOneUrlApart() {
		try (LoopbackServer server = new LoopbackServer(200, Map.of("content-type", "application/json"), "{}");
				GovernedApp app = GovernedApp.start("llm.quota.providers.team-a.base-url=" + server.baseUrl(),
						"llm.quota.providers.team-a.match-header.name=OpenAI-Project",
						"llm.quota.providers.team-a.match-header.value=proj_a",
						"llm.quota.providers.team-a.models.m.requests-per-minute=6",
						"llm.quota.providers.team-b.base-url=" + server.baseUrl(),
						"llm.quota.providers.team-b.models.m.requests-per-minute=6",
						// a request comes back every 11 s: none while the test runs
						"llm.quota.providers.team-a.burst-window=60s", "llm.quota.providers.team-b.burst-window=60s")) {
			for (String project : List.of("proj_a", "proj_b")) {
				app.webClient()
					.post()
					.uri(server.baseUrl() + "/v1/chat/completions")
					.header("OpenAI-Project", project)
					.bodyValue(Map.of("model", "m"))
					.retrieve()
					.bodyToMono(String.class)
					.block(PATIENCE);
			}
			assertThat(remainingRequests(app, "team-a")).isEqualTo(3);
			assertThat(remainingRequests(app, "team-b")).isEqualTo(3);
		}
	}

	@Test
	void garbageHeadersAndATruncatedStreamLeaveTheCallGoingAndTheBooksWhole() {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OPENAI,
				(sim) -> sim.latency((latency) -> latency.perOutputToken(Duration.ofMillis(5)).fixedOutputTokens(40)),
				"models.test-model.tokens-per-minute=600000", "models.test-model.concurrent-requests=2")) {
			provider.simulator.faults().next(Fault.GARBAGE_HEADERS);
			assertThat(provider.send(100, "Hello.").block(PATIENCE)).contains("usage");
			provider.simulator.faults().next(Fault.DROP_MID_STREAM);
			assertThatException().isThrownBy(() -> provider.stream(100, "Hello.").collectList().block(PATIENCE));
			await().atMost(PATIENCE).until(() -> provider.inFlight() == 0);
			assertThat(provider.stream(100, "Again.").collectList().block(PATIENCE)).isNotEmpty();
		}
	}

	@Test
	void unreadableNumbersNeitherBreakTheCallNorHoldItsSlot() {
		try (LoopbackServer server = new LoopbackServer(200, Map.of("content-type", "application/json"),
				"{\"usage\":{\"prompt_tokens\":1e30,\"completion_tokens\":1e30}}");
				GovernedApp app = GovernedApp.start("llm.quota.providers.p.base-url=" + server.baseUrl(),
						"llm.quota.providers.p.models.m.concurrent-requests=1")) {
			for (int i = 0; i < 2; i++) {
				assertThat(app.webClient()
					.post()
					.uri(server.baseUrl() + "/v1/chat/completions")
					.contentType(MediaType.APPLICATION_JSON)
					.bodyValue("{\"model\":\"m\",\"max_tokens\":1e30}")
					.retrieve()
					.bodyToMono(String.class)
					.block(PATIENCE)).contains("1e30");
			}
			assertThat(app.engine().inFlight(app.engine().pool("p", "m").account())).isZero();
		}
	}

	/**
	 * A provider (or a proxy before it) that reports counts no call reaches, up to what a
	 * long holds: the caller gets its answer, and the books neither overflow into a
	 * refund nor take a debt no pool repays. The count is read as no count: the call
	 * keeps its reservation.
	 */
	@ParameterizedTest
	@MethodSource("countsNoCallReaches")
	void countsNoCallReachesNeitherBreakTheCallNorMoveTheBooksBeyondTheReservation(String dialect, String path,
			String answer) {
		try (LoopbackServer server = new LoopbackServer(200, Map.of("content-type", "application/json"), answer);
				GovernedApp app = GovernedApp.start("llm.quota.providers.p.base-url=" + server.baseUrl(),
						"llm.quota.providers.p.dialect=" + dialect, "llm.quota.headroom=1.0",
						"llm.quota.providers.p.burst-window=60s",
						"llm.quota.providers.p.models.m.tokens-per-minute=10000")) {
			assertThat(app.webClient()
				.post()
				.uri(server.baseUrl() + path)
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue(Map.of("model", "m", "max_tokens", 4_000))
				.retrieve()
				.bodyToMono(String.class)
				.block(PATIENCE)).isEqualTo(answer);
			await().atMost(PATIENCE).until(() -> app.engine().inFlight(app.engine().pool("p", "m").account()) == 0);
			assertThat(app.engine()
				.snapshot(app.engine().pool("p", "m"))
				.bucket(BucketSpec.Scope.POOL, Dimension.TOKENS_PER_MINUTE)
				.remaining()).as("the output ceiling stands (what refills in 12 s, at 167 a second, aside)")
				.isBetween(10_000L - 4_000L - 100L, 10_000L - 4_000L + 2_000L);
		}
	}

	static List<Arguments> countsNoCallReaches() {
		String most = Long.toString(Long.MAX_VALUE);
		return List.of(
				Arguments.of("openai", "/v1/chat/completions",
						"{\"usage\":{\"prompt_tokens\":" + most + ",\"completion_tokens\":" + most + "}}"),
				Arguments.of("anthropic", "/v1/messages",
						"{\"usage\":{\"input_tokens\":" + most
								+ ",\"cache_read_input_tokens\":1,\"output_tokens\":5}}"),
				Arguments.of("openai", "/v1/chat/completions",
						"{\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":4000000000000000}}"));
	}

	/**
	 * A refusal whose wait no quota has (here a hundred years, or an HTTP-date in 9999):
	 * the quota counts as spent with no known reset, so a probe goes now and then, rather
	 * than every call failing without being sent until a restart.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "3155760000", "Fri, 31 Dec 9999 23:59:59 GMT" })
	void aWaitNoQuotaHasIsProbedLikeAnUnknownReset(String retryAfter) {
		try (LoopbackServer server = new LoopbackServer(429,
				Map.of("content-type", "application/json", "retry-after", retryAfter),
				"{\"error\":{\"message\":\"Rate limit reached\",\"type\":\"tokens\",\"code\":\"rate_limit_exceeded\"}}");
				GovernedApp app = GovernedApp.start("llm.quota.providers.p.base-url=" + server.baseUrl(),
						"llm.quota.providers.p.dialect=openai", "llm.quota.retry.exhausted-probe-interval=300ms")) {
			assertThatException().isThrownBy(() -> call(app, server.baseUrl() + "/v1/chat/completions"))
				.isInstanceOfSatisfying(QuotaExhaustedException.class,
						(spent) -> assertThat(spent.getReset()).as("no reset believed").isNull());
			await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100)).until(() -> {
				assertThatException().isThrownBy(() -> call(app, server.baseUrl() + "/v1/chat/completions"));
				return server.requests().size() >= 2;
			});
		}
	}

	/** A chat call to the URL, its body and answer as strings. */
	private static String call(GovernedApp app, String url) {
		return app.webClient()
			.post()
			.uri(url)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(Map.of("model", "m", "max_tokens", 10))
			.retrieve()
			.bodyToMono(String.class)
			.block(PATIENCE);
	}

	/**
	 * A call that asks for several choices ({@code n}) may generate its output ceiling
	 * for each, as the provider reserves: it reserves them all, and a stream of three
	 * choices that ends without usage is charged the text of all three, not one ceiling's
	 * worth.
	 */
	@Test
	void aCallOfSeveralChoicesReservesAndIsChargedTheOutputOfEach() {
		String choice = "x".repeat(400);
		StringBuilder stream = new StringBuilder();
		for (int index = 0; index < 3; index++) {
			stream.append("data: {\"choices\":[{\"index\":")
				.append(index)
				.append(",\"delta\":{\"content\":\"")
				.append(choice)
				.append("\"}}]}\n\n");
		}
		stream.append("data: [DONE]\n\n");
		try (LoopbackServer server = new LoopbackServer(200, Map.of("content-type", "text/event-stream"),
				stream.toString());
				GovernedApp app = GovernedApp.start("llm.quota.providers.p.base-url=" + server.baseUrl(),
						"llm.quota.providers.p.dialect=openai", "llm.quota.headroom=1.0",
						"llm.quota.providers.p.burst-window=60s", "llm.quota.providers.p.models.m.tokenizer=chars:4",
						"llm.quota.providers.p.models.m.tokens-per-minute=1000")) {
			Map<String, Object> body = Map.of("model", "m", "max_tokens", 100, "n", 3, "stream", true);
			dev.llmquota.core.Pool pool = app.engine().pool("p", "m");
			LlmQuotaCalls calls = app.context().getBean(LlmQuotaCalls.class);
			URI uri = URI.create(server.baseUrl() + "/v1/chat/completions");
			CallPlan plan = calls.plan(calls.entry("POST", uri, (name) -> null, (name) -> null), uri,
					JsonMapper.shared().writeValueAsBytes(body), (name) -> null);
			assertThat(plan.demand().outputCeiling()).as("the ceiling of each of 3 choices").isEqualTo(300);
			app.webClient()
				.post()
				.uri(server.baseUrl() + "/v1/chat/completions")
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue(body)
				.retrieve()
				.bodyToMono(String.class)
				.block(PATIENCE);
			await().atMost(PATIENCE).until(() -> app.engine().inFlight(pool.account()) == 0);
			assertThat(
					app.engine().snapshot(pool).bucket(BucketSpec.Scope.POOL, Dimension.TOKENS_PER_MINUTE).remaining())
				.as("charged 300 of output, the 1,200 characters streamed (what refills in 6 s, at 17 a second, aside)")
				.isLessThan(1_000L - 300L + 100L);
		}
	}

	/**
	 * A call whose input is partly stored at the provider (a Responses call continuing a
	 * previous response or a conversation, a Gemini call on a cached content) reports the
	 * whole input, of which its body carries a part: its count says nothing of how far
	 * the pool's estimates are from the provider's, and corrected by it, every later
	 * call's estimate of the pool was four times too large.
	 */
	@Test
	void aCallWhoseInputIsStoredAtTheProviderDoesNotCorrectThePoolsEstimates() {
		try (LoopbackServer server = new LoopbackServer(200, Map.of("content-type", "application/json"),
				"{\"usage\":{\"input_tokens\":500,\"output_tokens\":5,"
						+ "\"promptTokenCount\":500,\"candidatesTokenCount\":5}}");
				GovernedApp app = GovernedApp.start(entries(server))) {
			for (List<String> call : List.of(
					List.of("openai", "/v1/responses",
							"{\"model\":\"m\",\"previous_response_id\":\"resp_1\",\"input\":\"Go on\"}"),
					List.of("openai", "/v1/responses",
							"{\"model\":\"m\",\"conversation\":\"conv_1\",\"input\":\"Go on\"}"),
					List.of("gemini", "/v1beta/models/m:generateContent",
							"{\"cachedContent\":\"cachedContents/c1\",\"contents\":[{\"parts\":[{\"text\":\"Go on\"}]}]}"))) {
				app.webClient()
					.post()
					.uri(server.baseUrl() + "/" + call.get(0) + call.get(1))
					.contentType(MediaType.APPLICATION_JSON)
					.bodyValue(call.get(2))
					.retrieve()
					.bodyToMono(String.class)
					.block(PATIENCE);
				await().atMost(PATIENCE)
					.until(() -> app.engine().inFlight(app.engine().pool(call.get(0), "m").account()) == 0);
				assertThat(app.engine().pool(call.get(0), "m").drift().samples()).as(call.get(2)).isZero();
			}
		}
	}

	/**
	 * Calls under a provider's URL that spend no model's quota (file uploads, batch jobs,
	 * token counting, model management), and uploads whose model and input llm-quota
	 * cannot read (audio to transcribe, images to edit), pass through untouched: they
	 * reserved a default output ceiling each that no usage ever gave back, and an upload
	 * was estimated by its length (a 2 MiB file: half a million tokens) into a debt that
	 * held the account's other calls for hours.
	 */
	@Test
	void aCallThatSpendsNoModelsQuotaPassesThroughAndHoldsNothing() {
		String upload = "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"batch.jsonl\"\r\n\r\n"
				+ "x".repeat(2 * 1024 * 1024) + "\r\n--b--\r\n";
		String multipart = "multipart/form-data; boundary=b";
		String json = "application/json";
		String messages = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
		// dialect, path under its entry's base-url, content type, body
		List<List<String>> calls = List.of(List.of("openai", "/v1/files", multipart, upload),
				List.of("openai", "/v1/uploads/u1/parts", multipart, upload),
				List.of("openai", "/v1/batches", json,
						"{\"input_file_id\":\"f\",\"endpoint\":\"/v1/chat/completions\"}"),
				List.of("openai", "/v1/batches/b1/cancel", json, "{}"),
				List.of("openai", "/v1/fine_tuning/jobs", json, "{\"model\":\"m\",\"training_file\":\"f\"}"),
				List.of("openai", "/v1/vector_stores", json, "{\"name\":\"docs\"}"),
				List.of("openai", "/v1/responses/input_tokens", json, "{\"model\":\"m\",\"input\":\"Hi\"}"),
				List.of("openai", "/v1/conversations/conv_1/items", json,
						"{\"items\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\"Hi\"}]}"),
				List.of("openai", "/v1/realtime/client_secrets", json,
						"{\"session\":{\"type\":\"realtime\",\"model\":\"m\"}}"),
				List.of("openai", "/v1/audio/transcriptions", multipart, upload),
				List.of("openai", "/v1/images/edits", multipart, upload),
				List.of("azure-openai", "/openai/files?api-version=2024-10-21", multipart, upload),
				List.of("azure-openai", "/openai/deployments/m/audio/transcriptions?api-version=2024-10-21", multipart,
						upload),
				List.of("anthropic", "/v1/messages/count_tokens", json, messages),
				List.of("anthropic", "/v1/messages/batches", json, "{\"requests\":[]}"),
				List.of("anthropic", "/v1/files", multipart, upload),
				List.of("gemini", "/v1beta/models/m:countTokens", json, "{\"contents\":[]}"),
				List.of("gemini", "/upload/v1beta/files", multipart, upload),
				List.of("gemini", "/v1beta/cachedContents", json, "{\"model\":\"models/m\"}"),
				List.of("ollama", "/api/show", json, "{\"model\":\"m\"}"),
				List.of("ollama", "/api/pull", json, "{\"model\":\"m\"}"),
				// an Ollama entry whose base-url is its API's root, as Spring AI's is
				List.of("local", "/api/show", json, "{\"model\":\"m\"}"),
				List.of("bedrock", "/model/m/count-tokens", json, "{\"input\":{}}"));
		try (LoopbackServer server = new LoopbackServer(200, Map.of("content-type", "application/json"),
				"{\"id\":\"x\"}"); GovernedApp app = GovernedApp.start(entries(server))) {
			for (List<String> call : calls) {
				app.webClient()
					.post()
					.uri(server.baseUrl() + "/" + call.get(0) + call.get(1))
					.contentType(MediaType.parseMediaType(call.get(2)))
					.bodyValue(call.get(3))
					.retrieve()
					.bodyToMono(String.class)
					.block(PATIENCE);
				assertThat(server.requests().get(server.requests().size() - 1)).as(call.get(1))
					.isEqualTo(call.get(3).getBytes(StandardCharsets.UTF_8));
				assertThat(app.engine().pools()).as("no pool took %s", call.get(1)).allSatisfy((pool) -> {
					assertThat(pool.model()).isEqualTo("m");
					assertThat(app.engine().snapshot(pool).buckets())
						.as("the pool's and the account's buckets are full")
						.allSatisfy((bucket) -> assertThat(bucket.untilFull()).isZero());
				});
			}
			assertThat(server.requests()).hasSize(calls.size());
		}
	}

	/**
	 * A base-url whose own path is named like an endpoint that spends no quota (a gateway
	 * at {@code /batches/api}, spelled {@code /Batches/api} in the configuration), or
	 * ends where a name follows ({@code .../openai/deployments}, a deployment named
	 * {@code files}): the calls below it are still governed.
	 */
	@Test
	void aBaseUrlNamedLikeAnEndpointStillGovernsTheCallsBelowIt() {
		try (LoopbackServer server = new LoopbackServer(200, Map.of("content-type", "application/json"),
				"{\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}");
				GovernedApp app = GovernedApp.start(
						"llm.quota.providers.p.base-url=" + server.baseUrl() + "/Batches/api",
						"llm.quota.providers.p.dialect=openai",
						"llm.quota.providers.a.base-url=" + server.baseUrl() + "/azure/openai/deployments",
						"llm.quota.providers.a.dialect=azure-openai")) {
			call(app, server.baseUrl() + "/batches/api/v1/chat/completions");
			call(app, server.baseUrl() + "/azure/openai/deployments/files/chat/completions?api-version=2024-10-21");
			assertThat(app.engine().pool("p", "m").stats().outputSamples()).as("governed: its usage was read").isOne();
			assertThat(app.engine().pool("a", "files").stats().outputSamples()).as("governed: its usage was read")
				.isOne();
		}
	}

	/** One provider entry per dialect, each under its own path of the server. */
	private static String[] entries(LoopbackServer server) {
		List<String> properties = new java.util.ArrayList<>(List.of("llm.quota.max-wait=2s"));
		for (String dialect : List.of("openai", "azure-openai", "anthropic", "gemini", "ollama", "bedrock")) {
			String entry = "llm.quota.providers." + dialect + ".";
			properties
				.addAll(List.of(entry + "base-url=" + server.baseUrl() + "/" + dialect, entry + "dialect=" + dialect,
						entry + "account.tokens-per-minute=100000", entry + "models.m.tokens-per-minute=100000"));
		}
		properties.addAll(List.of("llm.quota.providers.local.base-url=" + server.baseUrl() + "/local/api",
				"llm.quota.providers.local.dialect=ollama",
				"llm.quota.providers.local.models.m.tokens-per-minute=100000"));
		return properties.toArray(String[]::new);
	}

	/**
	 * A stream's answer whose output llm-quota could not read (JSON where events were
	 * asked for, with no usage or broken, or an event that is not JSON) tells nothing of
	 * what was generated: the call keeps its output ceiling, as the same answer to a call
	 * that does not stream does.
	 */
	@ParameterizedTest
	@MethodSource("unreadableStreams")
	void aStreamWhoseOutputCannotBeReadKeepsItsReservation(String contentType, String body) {
		try (LoopbackServer server = new LoopbackServer(200, Map.of("content-type", contentType), body);
				GovernedApp app = GovernedApp.start("llm.quota.providers.p.base-url=" + server.baseUrl(),
						"llm.quota.providers.p.dialect=openai", "llm.quota.headroom=1.0",
						"llm.quota.providers.p.burst-window=60s",
						"llm.quota.providers.p.models.m.tokens-per-minute=10000")) {
			for (boolean stream : new boolean[] { false, true }) {
				app.webClient()
					.post()
					.uri(server.baseUrl() + "/v1/chat/completions")
					.contentType(MediaType.APPLICATION_JSON)
					.bodyValue(Map.of("model", "m", "max_tokens", 4_000, "stream", stream))
					.retrieve()
					.bodyToMono(String.class)
					.block(PATIENCE);
				await().atMost(PATIENCE).until(() -> app.engine().inFlight(app.engine().pool("p", "m").account()) == 0);
			}
			assertThat(app.engine()
				.snapshot(app.engine().pool("p", "m"))
				.bucket(BucketSpec.Scope.POOL, Dimension.TOKENS_PER_MINUTE)
				.remaining()).as("both calls' output ceilings stand (what refills in 12 s, at 167 a second, aside)")
				.isLessThan(10_000L - 2 * 4_000L + 2_000L);
		}
	}

	/**
	 * A caller that gives up after the answer came but before it began to read its body
	 * (a timeout while it does something else first): the call ends then, not at the
	 * ten-minute lease.
	 */
	@Test
	void aCallCancelledBeforeItsBodyIsReadGivesItsSlotBack() {
		try (LoopbackServer server = new LoopbackServer(200, Map.of("content-type", "application/json"),
				"{\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}");
				GovernedApp app = GovernedApp.start("llm.quota.providers.p.base-url=" + server.baseUrl(),
						"llm.quota.providers.p.dialect=openai",
						"llm.quota.providers.p.models.m.concurrent-requests=1")) {
			assertThatException().isThrownBy(() -> app.webClient()
				.post()
				.uri(server.baseUrl() + "/v1/chat/completions")
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue(Map.of("model", "m", "max_tokens", 10))
				.exchangeToMono(
						(response) -> Mono.delay(Duration.ofSeconds(30)).then(response.bodyToMono(String.class)))
				.timeout(Duration.ofMillis(300))
				.block(PATIENCE));
			await().atMost(PATIENCE).until(() -> app.engine().inFlight(app.engine().pool("p", "m").account()) == 0);
		}
	}

	/**
	 * A refusal larger than llm-quota reads to classify it: the caller gets the
	 * provider's answer (its first MiB, as from the blocking clients), not an error of
	 * llm-quota's reading, and the refused call's tokens go back.
	 */
	@Test
	void aRefusalLargerThanWhatIsReadOfItReachesTheCallerAndGivesItsTokensBack() {
		String large = "{\"error\":{\"message\":\"" + "x".repeat(2 * 1024 * 1024) + "\"}}";
		try (LoopbackServer server = new LoopbackServer(400, Map.of("content-type", "application/json"), large);
				GovernedApp app = GovernedApp.start("llm.quota.providers.p.base-url=" + server.baseUrl(),
						"llm.quota.providers.p.dialect=openai", "llm.quota.headroom=1.0",
						"llm.quota.providers.p.burst-window=60s",
						"llm.quota.providers.p.models.m.tokens-per-minute=10000")) {
			String answer = app.webClient()
				.post()
				.uri(server.baseUrl() + "/v1/chat/completions")
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue(Map.of("model", "m", "max_tokens", 1_000))
				.exchangeToMono((response) -> response.bodyToFlux(DataBuffer.class).map((buffer) -> {
					int length = buffer.readableByteCount();
					DataBufferUtils.release(buffer);
					return length;
				}).reduce(0, Integer::sum).map((length) -> response.statusCode().value() + " " + length))
				.block(PATIENCE);
			assertThat(answer).isEqualTo("400 " + LlmQuotaCalls.MAX_REFUSAL_BYTES);
			assertThat(app.engine().inFlight(app.engine().pool("p", "m").account())).isZero();
			assertThat(app.engine()
				.snapshot(app.engine().pool("p", "m"))
				.bucket(BucketSpec.Scope.POOL, Dimension.TOKENS_PER_MINUTE)
				.remaining()).as("the refused call's tokens back").isGreaterThan(9_900L);
		}
	}

	static List<Arguments> unreadableStreams() {
		return List.of(Arguments.of("application/json", "{\"choices\":[{\"message\":{\"content\":\"Hi\"}}]}"),
				Arguments.of("application/json", "{\"choices\":[{\"message\":{\"content\":\"Hi"),
				Arguments.of("text/event-stream", "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n"
						+ "data: {\"choices\":[{\"delta\":{\"content\n\ndata: [DONE]\n\n"));
	}

	/**
	 * A second llm-quota filter passes the governed request on, whether it sees it as the
	 * first one sent it or as a filter between copied it; the caller's attributes reach
	 * the filters after, and the HTTP request with what those filters added.
	 */
	@ParameterizedTest
	@ValueSource(booleans = { false, true })
	void theFilterAddedTwiceGovernsACallOnce(boolean copiedBetween) {
		try (LoopbackServer server = new LoopbackServer(200, Map.of("content-type", "application/json"), "{}");
				GovernedApp app = GovernedApp.start("llm.quota.providers.p.base-url=" + server.baseUrl(),
						"llm.quota.providers.p.models.m.concurrent-requests=1", "llm.quota.max-wait=1s")) {
			List<Object> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
			WebClient client = app.context()
				.getBean(WebClient.Builder.class)
				.filter((request, next) -> next.exchange(copiedBetween ? ClientRequest.from(request).build() : request))
				.filter(app.context().getBean(dev.llmquota.client.webclient.LlmQuotaExchangeFilterFunction.class))
				.filter((request, next) -> {
					seen.add(request.attribute("caller").orElse("none"));
					if (!copiedBetween) {
						// the attempt's own request: its attributes may change on the way
						request.attributes().put("later", "added");
					}
					return next.exchange(request);
				})
				.build();
			assertThat(client.post()
				.uri(server.baseUrl() + "/v1/chat/completions")
				.attribute("caller", "mine")
				.httpRequest((request) -> seen.add(request.getAttributes().get("caller") + " "
						+ request.getAttributes().getOrDefault("later", "-")))
				.bodyValue(Map.of("model", "m"))
				.retrieve()
				.bodyToMono(String.class)
				.block(PATIENCE)).isEqualTo("{}");
			assertThat(seen).containsExactly("mine", copiedBetween ? "mine -" : "mine added");
			assertThat(app.engine().inFlight(app.engine().pool("p", "m").account())).isZero();
		}
	}

	private static long remainingRequests(GovernedApp app, String provider) {
		return app.engine()
			.snapshot(app.engine().pool(provider, "m"))
			.bucket(BucketSpec.Scope.POOL, Dimension.REQUESTS_PER_MINUTE)
			.remaining();
	}

	@Test
	void anEmbeddingsCallReservesNoOutputAndIsChargedTheInputItUsed() {
		// OpenAI embeddings report prompt tokens only: there is no output to wait for
		try (LoopbackServer server = new LoopbackServer(200, Map.of("content-type", "application/json"),
				"{\"object\":\"list\",\"data\":[{\"object\":\"embedding\",\"index\":0,\"embedding\":[0.1]}],"
						+ "\"model\":\"text-embedding-3-small\",\"usage\":{\"prompt_tokens\":2,\"total_tokens\":2}}");
				GovernedApp app = GovernedApp.start("llm.quota.providers.p.base-url=" + server.baseUrl(),
						"llm.quota.providers.p.dialect=openai", "llm.quota.headroom=1.0",
						"llm.quota.providers.p.burst-window=60s",
						"llm.quota.providers.p.models.text-embedding-3-small.tokens-per-minute=1000")) {
			String answer = app.webClient()
				.post()
				.uri(server.baseUrl() + "/v1/embeddings")
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue(Map.of("model", "text-embedding-3-small", "input", "two words"))
				.retrieve()
				.bodyToMono(String.class)
				.block(PATIENCE);
			assertThat(answer).contains("embedding");
			dev.llmquota.core.Pool pool = app.engine().pool("p", "text-embedding-3-small");
			assertThat(app.engine()
				.snapshot(pool)
				.bucket(dev.llmquota.core.BucketSpec.Scope.POOL, dev.llmquota.core.Dimension.TOKENS_PER_MINUTE)
				.remaining()).as("its 2 input tokens, not default-max-tokens (4,096) held for good")
				.isBetween(1_000L - 10, 1_000L);
		}
	}

	/**
	 * A stream cancelled while its head is held back (the provider has sent only events
	 * that tell nothing yet, as a reasoning model does while it thinks): the buffers read
	 * so far go back to their pool, and the call's slot too; and a call whose caller
	 * gives up at any moment before (as its permit is granted) gives its slot back.
	 */
	@Test
	void aStreamCancelledWhileItsHeadIsHeldGivesItsBuffersAndItsSlotBack() {
		List<NettyDataBuffer> sent = new CopyOnWriteArrayList<>();
		ClientHttpConnector thinking = (method, uri, request) -> request.apply(new MockClientHttpRequest(method, uri))
			.then(Mono.fromSupplier(() -> {
				MockClientHttpResponse response = new MockClientHttpResponse(HttpStatus.OK);
				response.getHeaders().setContentType(MediaType.TEXT_EVENT_STREAM);
				response.setBody(Flux.concat(Mono.<DataBuffer>fromSupplier(() -> {
					NettyDataBuffer created = new NettyDataBufferFactory(UnpooledByteBufAllocator.DEFAULT)
						.wrap(Unpooled.copiedBuffer(
								RESPONSES_REFUSED.substring(0, RESPONSES_REFUSED.indexOf("event: response.failed")),
								StandardCharsets.UTF_8));
					sent.add(created);
					return created;
				}), Flux.never())
					// what could not be delivered goes back, as Reactor Netty does it
					.doOnDiscard(NettyDataBuffer.class, DataBufferUtils::release));
				return response;
			}));
		try (GovernedApp app = GovernedApp.start("llm.quota.providers.p.base-url=http://127.0.0.1:9",
				"llm.quota.providers.p.dialect=openai")) {
			WebClient client = app.context().getBean(WebClient.Builder.class).clientConnector(thinking).build();
			Supplier<Flux<String>> call = () -> client.post()
				.uri("http://127.0.0.1:9/v1/responses")
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue(Map.of("model", "gpt-5.1", "stream", true, "input", "Hello"))
				.retrieve()
				.bodyToFlux(String.class);
			dev.llmquota.core.Pool pool = app.engine().pool("p", "gpt-5.1");
			Disposable thinker = call.get().subscribe();
			await().atMost(PATIENCE).until(() -> sent.size() == 1);
			thinker.dispose();
			await().atMost(PATIENCE).until(() -> app.engine().inFlight(pool.account()) == 0);
			assertThat(sent.get(0).getNativeBuffer().refCnt()).as("the held event's buffer released").isZero();
			// callers giving up at every moment of the call, up to its head
			for (int micros = 0; micros < 2_000; micros += 25) {
				Duration patience = Duration.ofNanos(micros * 1_000L);
				assertThatException().isThrownBy(() -> call.get().timeout(patience).blockLast(PATIENCE));
				await().pollDelay(Duration.ZERO)
					.pollInterval(Duration.ofMillis(2))
					.atMost(PATIENCE)
					.until(() -> app.engine().inFlight(pool.account()) == 0);
			}
			assertThat(sent).allSatisfy((buffer) -> assertThat(buffer.getNativeBuffer().refCnt()).isZero());
		}
	}

	private static final String RESPONSES_REFUSED = "event: response.created\n"
			+ "data: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_1\",\"status\":\"in_progress\"}}\n\n"
			+ "event: response.failed\n"
			+ "data: {\"type\":\"response.failed\",\"sequence_number\":1,\"response\":{\"id\":\"resp_1\",\"status\":\"failed\","
			+ "\"error\":{\"code\":\"rate_limit_exceeded\",\"message\":\"Rate limit reached for gpt-5.1 in organization org-AAA on tokens"
			+ " per min (TPM): Limit 30000, Used 22999, Requested 12528. Please try again in 200ms. Visit"
			+ " https://platform.openai.com/account/rate-limits to learn more.\"}}}\n\n";

	@Test
	void aResponsesStreamRefusedAfterA200BeforeAnyOfItReachedTheCallerIsRetriedLikeA429() {
		try (LoopbackServer server = new LoopbackServer(200, Map.of("content-type", "text/event-stream"),
				RESPONSES_REFUSED);
				GovernedApp app = GovernedApp.start("llm.quota.providers.p.base-url=" + server.baseUrl(),
						"llm.quota.providers.p.dialect=openai", "llm.quota.retry.max-attempts=3")) {
			assertThatException()
				.isThrownBy(() -> app.webClient()
					.post()
					.uri(server.baseUrl() + "/v1/responses")
					.contentType(MediaType.APPLICATION_JSON)
					.bodyValue(Map.of("model", "gpt-5.1", "stream", true, "input", "Hello"))
					.retrieve()
					.bodyToFlux(String.class)
					.collectList()
					.block(PATIENCE))
				.isInstanceOf(dev.llmquota.RateLimitedException.class);
			assertThat(server.requests()).as("every attempt, and no more").hasSize(3);
			dev.llmquota.core.Pool pool = app.engine().pool("p", "gpt-5.1");
			assertThat(pool.stats().lastRateLimit().dimension())
				.isEqualTo(dev.llmquota.core.Dimension.TOKENS_PER_MINUTE);
			assertThat(app.engine().inFlight(pool.account())).isZero();
		}
	}

	@Test
	void aResponsesStreamRefusedAfterItsTextBeganEndsAsTheProviderEndedItAndHoldsThePool() {
		String begun = "event: response.output_text.delta\n"
				+ "data: {\"type\":\"response.output_text.delta\",\"sequence_number\":1,\"delta\":\"Hel\"}\n\n";
		String stream = RESPONSES_REFUSED.replace("event: response.failed", begun + "event: response.failed");
		try (LoopbackServer server = new LoopbackServer(200, Map.of("content-type", "text/event-stream"), stream);
				GovernedApp app = GovernedApp.start("llm.quota.providers.p.base-url=" + server.baseUrl(),
						"llm.quota.providers.p.dialect=openai")) {
			String received = String.join("",
					app.webClient()
						.post()
						.uri(server.baseUrl() + "/v1/responses")
						.contentType(MediaType.APPLICATION_JSON)
						.bodyValue(Map.of("model", "gpt-5.1", "stream", true, "input", "Hello"))
						.retrieve()
						.bodyToFlux(String.class)
						.collectList()
						.block(PATIENCE));
			assertThat(received).contains("Hel").contains("rate_limit_exceeded");
			assertThat(server.requests()).hasSize(1);
			dev.llmquota.core.Pool pool = app.engine().pool("p", "gpt-5.1");
			assertThat(pool.stats().lastRateLimit()).as("the penalty is in the books").isNotNull();
			assertThat(app.engine().inFlight(pool.account())).isZero();
		}
	}

}
