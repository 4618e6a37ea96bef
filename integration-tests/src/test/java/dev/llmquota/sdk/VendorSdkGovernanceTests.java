package dev.llmquota.sdk;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.IntStream;

import com.anthropic.client.AnthropicClient;
import com.anthropic.client.okhttp.AnthropicOkHttpClient;
import com.anthropic.core.http.StreamResponse;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.openai.client.OpenAIClient;
import com.openai.client.OpenAIClientImpl;
import com.openai.core.ClientOptions;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.llmquota.QuotaExhaustedException;
import dev.llmquota.client.anthropic.LlmQuotaAnthropicInterceptor;
import dev.llmquota.client.okhttp.LlmQuotaOkHttpInterceptor;
import dev.llmquota.core.Pool;
import dev.llmquota.it.SimulatedApplication;
import dev.llmquota.test.simulator.Fault;
import dev.llmquota.test.simulator.ProviderSimulator;
import dev.llmquota.test.simulator.ProviderSimulatorBuilder;
import dev.llmquota.test.simulator.RequestRecord;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

/**
 * The vendors' Java SDKs built by hand, their retry settings at their defaults:
 * Anthropic's client with llm-quota's interceptor bean, OpenAI's with llm-quota's OkHttp
 * interceptor on the OkHttp client it is given. Each SDK's own attempts are counted by an
 * interceptor of the test's, outside llm-quota's.
 */
class VendorSdkGovernanceTests {

	private static final Duration PATIENCE = SimulatedApplication.PATIENCE;

	private static final class Setup implements AutoCloseable {

		final SimulatedApplication app;

		final ProviderSimulator simulator;

		final ConfigurableApplicationContext context;

		final AtomicInteger attempts = new AtomicInteger();

		Setup(Consumer<ProviderSimulatorBuilder> simulator, String... properties) {
			this.app = SimulatedApplication.start(simulator, (base) -> {
				List<String> all = SimulatedApplication.openAiAndAnthropic(base,
						"llm.quota.providers.anthropic.models.claude-sonnet-4-5.concurrent-requests=1");
				all.addAll(List.of(properties));
				return all;
			});
			this.simulator = this.app.simulator();
			this.context = this.app.context();
		}

		AnthropicClient anthropic() {
			return AnthropicOkHttpClient.builder()
				.baseUrl(this.simulator.baseUrl())
				.apiKey("test-key")
				.addInterceptor((client) -> {
					// outside llm-quota's: the SDK's own attempts
					return new CountingAnthropicClient(client, this.attempts);
				})
				.addInterceptor(this.context.getBean(LlmQuotaAnthropicInterceptor.class))
				.build();
		}

		OpenAIClient openAi() {
			okhttp3.OkHttpClient okHttp = new okhttp3.OkHttpClient.Builder().addInterceptor((chain) -> {
				this.attempts.incrementAndGet();
				return chain.proceed(chain.request());
			}).addInterceptor(this.context.getBean(LlmQuotaOkHttpInterceptor.class)).build();
			return new OpenAIClientImpl(ClientOptions.builder()
				.httpClient(new com.openai.client.okhttp.OkHttpClient(okHttp))
				.baseUrl(this.simulator.baseUrl() + "/v1")
				.apiKey("test-key")
				.build());
		}

		Pool pool(String provider, String model) {
			return this.app.pool(provider, model);
		}

		int inFlight(Pool pool) {
			return this.app.inFlight(pool);
		}

		@Override
		public void close() {
			this.app.close();
		}

	}

	private static MessageCreateParams message(String text) {
		return MessageCreateParams.builder().model("claude-sonnet-4-5").maxTokens(20).addUserMessage(text).build();
	}

	private static ChatCompletionCreateParams completion(String text) {
		return ChatCompletionCreateParams.builder()
			.model("gpt-4o")
			.maxCompletionTokens(20)
			.addUserMessage(text)
			.build();
	}

	@Test
	void theEntrysCredentialsReachTheProviderInPlaceOfTheSdksOwnKey() {
		try (Setup setup = new Setup((sim) -> sim.requireHeader("x-api-key", "entry-key"),
				"llm.quota.providers.anthropic.headers.x-api-key=entry-key")) {
			assertThat(setup.anthropic().messages().create(message("Hello.")).content()).isNotEmpty();
		}
	}

	@Test
	void anthropicCallsArePacedAndStreamsChargedTheirUsage() throws Exception {
		try (Setup setup = new Setup(
				(sim) -> sim.model("claude-sonnet-4-5", (limits) -> limits.concurrentRequests(1)))) {
			AnthropicClient client = setup.anthropic();
			List<? extends CompletableFuture<?>> calls = IntStream.range(0, 4)
				.mapToObj((i) -> CompletableFuture.supplyAsync(() -> client.messages().create(message("Call " + i))))
				.toList();
			for (CompletableFuture<?> call : calls) {
				call.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
			}
			// the simulator logs a completed call as its last byte goes out: the caller
			// may be first
			await().atMost(PATIENCE).until(() -> setup.simulator.requestLog().size() == 4);
			assertThat(setup.simulator.requestLog().records()).hasSize(4)
				.allSatisfy((record) -> assertThat(record.outcome()).isEqualTo(RequestRecord.Outcome.COMPLETED));
			Pool pool = setup.pool("anthropic", "claude-sonnet-4-5");
			assertThat(pool.stats().billedOutput()).isEqualTo(20);
			try (StreamResponse<RawMessageStreamEvent> stream = client.messages().createStreaming(message("Stream."))) {
				assertThat(stream.stream().count()).isPositive();
			}
			await().atMost(PATIENCE).until(() -> pool.stats().billedOutput() == 25 && setup.inFlight(pool) == 0);
		}
	}

	@Test
	void openAiCallsArePacedAndStreamsChargedTheirUsage() throws Exception {
		try (Setup setup = new Setup((sim) -> sim.model("gpt-4o", (limits) -> limits.concurrentRequests(1)))) {
			OpenAIClient client = setup.openAi();
			List<? extends CompletableFuture<?>> calls = IntStream.range(0, 4)
				.mapToObj((i) -> CompletableFuture
					.supplyAsync(() -> client.chat().completions().create(completion("Call " + i))))
				.toList();
			for (CompletableFuture<?> call : calls) {
				call.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
			}
			// the simulator logs a completed call as its last byte goes out: the caller
			// may be first
			await().atMost(PATIENCE).until(() -> setup.simulator.requestLog().size() == 4);
			assertThat(setup.simulator.requestLog().records()).hasSize(4)
				.allSatisfy((record) -> assertThat(record.outcome()).isEqualTo(RequestRecord.Outcome.COMPLETED));
			Pool pool = setup.pool("openai", "gpt-4o");
			assertThat(pool.stats().billedOutput()).isEqualTo(20);
			try (com.openai.core.http.StreamResponse<ChatCompletionChunk> stream = client.chat()
				.completions()
				.createStreaming(completion("Stream."))) {
				assertThat(stream.stream().count()).isPositive();
			}
			await().atMost(PATIENCE).until(() -> pool.stats().billedOutput() == 25 && setup.inFlight(pool) == 0);
		}
	}

	@Test
	void aProviderRefusingEveryCallSeesExactlyLlmQuotasAttemptsAndEachSdkMakesOne() {
		try (Setup setup = new Setup((sim) -> sim.faultRate(Fault.RATE_LIMITED, 1.0),
				"llm.quota.retry.max-attempts=3")) {
			setup.simulator.faults().rateLimitWait(Duration.ofMillis(20));
			assertThatException().isThrownBy(() -> setup.anthropic().messages().create(message("Hello.")));
			assertThat(setup.simulator.requestLog().records()).as("requests of an Anthropic call").hasSize(3);
			assertThat(setup.attempts.get()).as("the Anthropic SDK's attempts").isOne();
			assertThatException().isThrownBy(() -> setup.openAi().chat().completions().create(completion("Hello.")));
			assertThat(setup.simulator.requestLog().records()).as("and of an OpenAI call").hasSize(6);
			assertThat(setup.attempts.get()).as("and the OpenAI SDK's").isEqualTo(2);
		}
	}

	@Test
	void aSpentQuotaReachesTheProviderOnceAndEachSdkAttemptsOncePerCall() {
		try (Setup setup = new Setup((sim) -> sim.exhausted(true))) {
			AnthropicClient anthropic = setup.anthropic();
			for (int i = 0; i < 2; i++) {
				assertThatException().isThrownBy(() -> anthropic.messages().create(message("Hello.")));
			}
			assertThat(setup.simulator.requestLog().records()).hasSize(1);
			assertThat(setup.attempts.get()).isEqualTo(2);
			// the second call failed fast, before the provider: llm-quota's own exception
			assertThatException().isThrownBy(() -> anthropic.messages().create(message("Hello.")))
				.isInstanceOf(QuotaExhaustedException.class);
		}
	}

	/**
	 * Counts the attempts of Anthropic's SDK, each of which goes through its
	 * interceptors.
	 */
	private static final class CountingAnthropicClient implements com.anthropic.core.http.HttpClient {

		private final com.anthropic.core.http.HttpClient client;

		private final AtomicInteger attempts;

		CountingAnthropicClient(com.anthropic.core.http.HttpClient client, AtomicInteger attempts) {
			this.client = client;
			this.attempts = attempts;
		}

		@Override
		public com.anthropic.core.http.HttpResponse execute(com.anthropic.core.http.HttpRequest request,
				com.anthropic.core.RequestOptions options) {
			this.attempts.incrementAndGet();
			return this.client.execute(request, options);
		}

		@Override
		public CompletableFuture<com.anthropic.core.http.HttpResponse> executeAsync(
				com.anthropic.core.http.HttpRequest request, com.anthropic.core.RequestOptions options) {
			this.attempts.incrementAndGet();
			return this.client.executeAsync(request, options);
		}

		@Override
		public void close() {
			this.client.close();
		}

	}

}
