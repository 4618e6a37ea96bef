package dev.llmquota.client;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import com.google.genai.types.HttpRetryOptions;
import dev.llmquota.LlmQuota;
import dev.llmquota.QuotaExhaustedException;
import dev.llmquota.client.okhttp.LlmQuotaOkHttpInterceptor;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.Demand;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.Priority;
import dev.llmquota.core.QuotaPermit;
import dev.llmquota.test.simulator.RequestRecord;
import okhttp3.Call;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.BufferedSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.ai.anthropic.http.okhttp.AnthropicHttpClientBuilderCustomizer;
import org.springframework.ai.anthropic.http.okhttp.SpringAiAnthropicHttpClient;
import org.springframework.ai.openai.http.okhttp.OpenAiHttpClientBuilderCustomizer;
import org.springframework.ai.openai.http.okhttp.SpringAiOpenAiHttpClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * OkHttp calls, as Spring AI's SDK clients make them, governed by the interceptor: the
 * same scenarios as WebClient's.
 */
class OkHttpGovernanceTests {

	private static final Duration PATIENCE = Duration.ofSeconds(15);

	private static final MediaType JSON = MediaType.get("application/json");

	private static OkHttpClient client(SimulatedProvider provider) {
		return new OkHttpClient.Builder()
			.addInterceptor(provider.app.context().getBean(LlmQuotaOkHttpInterceptor.class))
			.build();
	}

	private static Request request(SimulatedProvider provider, int maxTokens, boolean stream, String prompt) {
		byte[] body = JsonMapper.shared()
			.writeValueAsBytes(provider.dialect.body(SimulatedProvider.MODEL, maxTokens, stream, prompt));
		return new Request.Builder()
			.url(provider.simulator.baseUrl() + provider.dialect.path(SimulatedProvider.MODEL, stream))
			.post(RequestBody.create(body, JSON))
			.build();
	}

	private static String send(OkHttpClient client, Request request) throws IOException {
		try (Response response = client.newCall(request).execute()) {
			return response.code() + " " + response.body().string();
		}
	}

	@ParameterizedTest
	@EnumSource(DialectCase.class)
	void reservesTheOutputCeilingDuringTheCallAndRefundsItAfter(DialectCase dialect) throws Exception {
		try (SimulatedProvider provider = SimulatedProvider.start(dialect,
				(sim) -> sim.model(SimulatedProvider.MODEL, (limits) -> limits.requestsPerMinute(600))
					.latency((latency) -> latency.timeToFirstToken(Duration.ofMillis(400)).fixedOutputTokens(20)),
				"llm.quota.headroom=1.0", "reserve-max-tokens=true", "burst-window=60s",
				"models.test-model.output-tokens-per-minute=6000")) {
			OkHttpClient client = client(provider);
			CompletableFuture<String> answer = CompletableFuture.supplyAsync(() -> {
				try {
					return send(client, request(provider, 4_000, false, "Hi."));
				}
				catch (IOException ex) {
					throw new IllegalStateException(ex);
				}
			});
			await().atMost(PATIENCE).until(() -> provider.inFlight() == 1);
			assertThat(outputRemaining(provider)).isLessThan(2_500);
			assertThat(answer.get()).startsWith("200 ");
			await().atMost(PATIENCE).until(() -> provider.inFlight() == 0);
			assertThat(outputRemaining(provider)).isGreaterThan(5_500);
			assertThat(provider.pool().serverLimits().isEmpty()).as("rate-limit headers read")
				.isEqualTo(!dialect.reportsHeaders());
		}
	}

	@Test
	void aBodyThatIsNotJsonPassesThroughUnchanged() throws IOException {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OPENAI, (sim) -> {
		})) {
			Request request = new Request.Builder().url(provider.simulator.baseUrl() + "/v1/chat/completions")
				.post(RequestBody.create("this is { not json".getBytes(java.nio.charset.StandardCharsets.UTF_8), JSON))
				.build();
			assertThat(send(client(provider), request)).startsWith("400 ").contains("error");
			assertThat(provider.inFlight()).isZero();
		}
	}

	@Test
	void aRateLimitIsWaitedOutAndRetriedInsideTheInterceptor() throws IOException {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.GEMINI,
				(sim) -> sim.window(Duration.ofSeconds(1))
					.model(SimulatedProvider.MODEL, (limits) -> limits.requestsPerMinute(60)),
				"llm.quota.max-wait=10s")) {
			OkHttpClient client = client(provider);
			assertThat(send(client, request(provider, 10, false, "One."))).startsWith("200 ");
			assertThat(send(client, request(provider, 10, false, "Two."))).startsWith("200 ");
			await().atMost(PATIENCE).until(() -> provider.simulator.requestLog().size() == 3);
			assertThat(provider.simulator.requestLog().records()).extracting(RequestRecord::outcome)
				.containsExactly(RequestRecord.Outcome.COMPLETED, RequestRecord.Outcome.REFUSED,
						RequestRecord.Outcome.COMPLETED);
		}
	}

	/**
	 * Google's GenAI SDK retries as its request's tag tells: llm-quota takes its retries
	 * over only where it enforces. In shadow mode and off, the SDK's own attempts stay as
	 * they were without llm-quota.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "enforce", "shadow", "off" })
	void googleGenAiRetriesAreLeftToLlmQuotaOnlyWhereItEnforces(String mode) throws IOException {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.GEMINI, (sim) -> {
		}, "mode=" + mode)) {
			AtomicReference<Object> retryOptions = new AtomicReference<>("not called");
			OkHttpClient client = new OkHttpClient.Builder()
				.addInterceptor(provider.app.context().getBean(LlmQuotaOkHttpInterceptor.class))
				// where the SDK's own retry interceptor reads its options
				.addInterceptor((chain) -> {
					retryOptions.set(chain.request().tag(HttpRetryOptions.class));
					return chain.proceed(chain.request());
				})
				.build();
			assertThat(send(client, request(provider, 10, false, "One."))).startsWith("200 ");
			if (mode.equals("enforce")) {
				assertThat(retryOptions.get()).isInstanceOf(HttpRetryOptions.class);
			}
			else {
				assertThat(retryOptions.get()).as("the SDK's retry options in mode %s", mode).isNull();
			}
		}
	}

	@Test
	void aSpentQuotaReachesTheProviderOnceAndNothingItsCallerGetsIsRetriedByAnSdk() throws Exception {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OPENAI, (sim) -> sim.exhausted(true))) {
			OkHttpClient client = client(provider);
			// the provider answered: its answer, marked not to be retried
			try (Response answered = client.newCall(request(provider, 10, false, "Hi.")).execute()) {
				assertThat(answered.code()).isEqualTo(429);
				assertThat(answered.header("x-should-retry")).isEqualTo("false");
				assertThat(answered.header(LlmQuotaOkHttpInterceptor.EXCEPTION_HEADER))
					.isEqualTo("QuotaExhaustedException");
				assertThat(answered.body().string()).contains("insufficient_quota");
			}
			// failing fast on a synchronous call: the contract exception, not an
			// IOException an SDK would retry
			assertThatException().isThrownBy(() -> send(client, request(provider, 10, false, "Hi.")))
				.isInstanceOf(QuotaExhaustedException.class);
			// on an enqueued call OkHttp would make an exception an
			// IOException: an answer
			CompletableFuture<Response> enqueued = OkHttpCalls
				.enqueue(client.newCall(request(provider, 10, false, "Hi.")));
			try (Response answer = enqueued.get(PATIENCE.toSeconds(), TimeUnit.SECONDS)) {
				assertThat(answer.code()).isEqualTo(503);
				assertThat(answer.header("x-should-retry")).isEqualTo("false");
				assertThat(answer.header(LlmQuotaOkHttpInterceptor.EXCEPTION_HEADER))
					.isEqualTo("QuotaExhaustedException");
				assertThat(answer.body().string()).contains("An administrative quota");
			}
			await().atMost(PATIENCE).until(() -> provider.simulator.requestLog().size() == 1);
			assertThat(provider.simulator.requestLog().records()).hasSize(1);
		}
	}

	/**
	 * A call its caller cancelled before its turn came (before it started, or while it
	 * waited for admission) is given back whole once admitted, not sent (OkHttp would
	 * refuse to send it); it used to be charged as a call that may have reached the
	 * provider.
	 */
	@Test
	void aCallCancelledBeforeItIsSentIsNeitherSentNorCharged() throws Exception {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OPENAI, (sim) -> {
		}, "llm.quota.headroom=1.0", "llm.quota.max-wait=30s", "models.test-model.concurrent-requests=1",
				"models.test-model.tokens-per-minute=1000000")) {
			OkHttpClient client = client(provider);
			long full = tokensRemaining(provider);
			Call early = client.newCall(request(provider, 200_000, false, "Hello."));
			early.cancel();
			assertThatException().isThrownBy(early::execute).isInstanceOf(IOException.class);
			assertThat(tokensRemaining(provider)).as("the call cancelled before it started").isEqualTo(full);
			QuotaPermit held = provider.app.engine()
				.acquire(provider.pool(), new Demand(1, 1), null, PATIENCE)
				.block(PATIENCE);
			Call waiting = client.newCall(request(provider, 200_000, false, "Hello."));
			CompletableFuture<Response> answer = OkHttpCalls.enqueue(waiting);
			await().atMost(PATIENCE).until(() -> provider.waiting() == 1);
			waiting.cancel();
			// it leaves the line at once, holding back no call behind it
			await().atMost(PATIENCE).until(() -> provider.waiting() == 0);
			assertThatException().isThrownBy(() -> answer.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
				.withCauseInstanceOf(IOException.class);
			held.release();
			await().atMost(PATIENCE).until(() -> provider.inFlight() == 0);
			assertThat(provider.simulator.requestLog().records()).isEmpty();
			assertThat(tokensRemaining(provider)).as("the call cancelled while it waited").isEqualTo(full);
		}
	}

	/**
	 * A call OkHttp enqueues runs on its dispatcher's thread, where no scope reaches: it
	 * carries what its client's interceptor is bound to, and a scope still wins on a call
	 * executed on its caller's thread.
	 */
	@Test
	void anEnqueuedCallCarriesWhatItsInterceptorIsBoundTo() throws Exception {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OPENAI, (sim) -> {
		})) {
			LlmQuotaOkHttpInterceptor bound = provider.app.context()
				.getBean(LlmQuotaOkHttpInterceptor.class)
				.with(LlmQuota.PRIORITY, Priority.BATCH);
			OkHttpClient client = new OkHttpClient.Builder().addInterceptor(bound).build();
			try (Response answer = OkHttpCalls.enqueue(client.newCall(request(provider, 10, false, "Hi.")))
				.get(PATIENCE.toSeconds(), TimeUnit.SECONDS)) {
				assertThat(answer.code()).isEqualTo(200);
			}
			try (Response answer = LlmQuota.with(LlmQuota.PRIORITY, Priority.INTERACTIVE).get(() -> {
				try {
					return client.newCall(request(provider, 10, false, "Hi.")).execute();
				}
				catch (IOException ex) {
					throw new UncheckedIOException(ex);
				}
			})) {
				assertThat(answer.code()).isEqualTo(200);
			}
			assertThat(provider.pool().stats().waits(Priority.BATCH).admitted()).as("admitted as BATCH").isOne();
			assertThat(provider.pool().stats().waits(Priority.INTERACTIVE).admitted()).as("admitted as INTERACTIVE")
				.isOne();
			assertThatIllegalArgumentException().isThrownBy(() -> bound.with(LlmQuota.PROVIDER, "nowhere"))
				.withMessageContaining("'nowhere'");
		}
	}

	private static long tokensRemaining(SimulatedProvider provider) {
		return provider.snapshot().bucket(BucketSpec.Scope.POOL, Dimension.TOKENS_PER_MINUTE).remaining();
	}

	@Test
	void aStreamHoldsItsSlotUntilClosed() throws IOException {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.ANTHROPIC,
				(sim) -> sim.latency((latency) -> latency.perOutputToken(Duration.ofMillis(20)).fixedOutputTokens(50)),
				"llm.quota.headroom=1.0", "models.test-model.concurrent-requests=1")) {
			OkHttpClient client = client(provider);
			try (Response response = client.newCall(request(provider, 100, true, "Tell a story.")).execute()) {
				BufferedSource source = response.body().source();
				assertThat(source.readUtf8Line()).startsWith("event:");
				assertThat(provider.inFlight()).isEqualTo(1);
			}
			await().atMost(PATIENCE).until(() -> provider.inFlight() == 0);
			assertThat(send(client, request(provider, 10, true, "Short."))).startsWith("200 ");
		}
	}

	/**
	 * OpenAI's SDK (4.105.0, not 4.49.0) closes a stream as soon as it reads
	 * {@code data: [DONE]}, before the connection's end: a stream that said its end is
	 * charged what it reported, as one read to the last byte; one closed before its end
	 * keeps its reservation.
	 */
	@ParameterizedTest
	@EnumSource(value = DialectCase.class, names = { "OPENAI", "AZURE_OPENAI", "ANTHROPIC", "OLLAMA" })
	void aStreamClosedRightAfterItsLastEventIsChargedItsReportedUsage(DialectCase dialect) throws IOException {
		try (SimulatedProvider provider = SimulatedProvider.start(dialect,
				(sim) -> sim.latency((latency) -> latency.perOutputToken(Duration.ofMillis(10)).fixedOutputTokens(20)),
				"llm.quota.headroom=1.0")) {
			OkHttpClient client = client(provider);
			try (Response response = client.newCall(request(provider, 1_000, true, "Tell a story.")).execute()) {
				assertThat(response.body().source().readUtf8Line()).isNotNull();
			}
			await().atMost(PATIENCE).until(() -> provider.inFlight() == 0);
			assertThat(provider.pool().stats().outputSamples()).as("a stream cut short reports nothing").isZero();
			try (Response response = client.newCall(request(provider, 1_000, true, "Tell a story.")).execute()) {
				BufferedSource source = response.body().source();
				String line;
				do {
					line = source.readUtf8Line();
					assertThat(line).as("the stream's last event").isNotNull();
				}
				while (!dialect.lastEvent(line));
			}
			await().atMost(PATIENCE).until(() -> provider.inFlight() == 0);
			assertThat(provider.pool().stats().outputSamples()).as("its usage reached the books").isEqualTo(1);
			assertThat(provider.pool().stats().billedOutput()).isEqualTo(20);
		}
	}

	@Test
	void springAiSdkClientsGetTheInterceptorThroughTheirBuilderHooks() throws Exception {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OPENAI, (sim) -> {
		})) {
			LlmQuotaOkHttpInterceptor interceptor = provider.app.context().getBean(LlmQuotaOkHttpInterceptor.class);
			SpringAiOpenAiHttpClient.Builder openAi = SpringAiOpenAiHttpClient.builder();
			provider.app.context()
				.getBeansOfType(OpenAiHttpClientBuilderCustomizer.class)
				.values()
				.forEach((customizer) -> customizer.customize(openAi));
			OkHttpClient openAiOkHttp = openAi.build().getOkHttpClient();
			assertThat(openAiOkHttp.interceptors()).contains(interceptor);
			SpringAiAnthropicHttpClient.Builder anthropic = SpringAiAnthropicHttpClient.builder()
				.backend(com.anthropic.backends.AnthropicBackend.builder()
					.apiKey("test-key")
					.baseUrl(provider.simulator.baseUrl())
					.build());
			provider.app.context()
				.getBeansOfType(AnthropicHttpClientBuilderCustomizer.class)
				.values()
				.forEach((customizer) -> customizer.customize(anthropic));
			// the Anthropic client keeps its OkHttp client to itself; read it as the SDK
			// would use it
			java.lang.reflect.Method okHttp = SpringAiAnthropicHttpClient.class.getDeclaredMethod("getOkHttpClient");
			okHttp.setAccessible(true);
			assertThat(((OkHttpClient) okHttp.invoke(anthropic.build())).interceptors()).contains(interceptor);
			// the SDK's own OkHttp client, as Spring AI builds it, is governed
			assertThat(send(openAiOkHttp, request(provider, 10, false, "Hi."))).startsWith("200 ");
			assertThat(provider.pool().drift().samples()).isEqualTo(1);
		}
	}

	private static long outputRemaining(SimulatedProvider provider) {
		return provider.snapshot().bucket(BucketSpec.Scope.POOL, Dimension.OUTPUT_TOKENS_PER_MINUTE).remaining();
	}

}
