package dev.llmquota.langchain4j;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.IntStream;

import dev.langchain4j.http.client.HttpClient;
import dev.langchain4j.http.client.HttpClientBuilder;
import dev.langchain4j.http.client.HttpRequest;
import dev.langchain4j.http.client.SuccessfulHttpResponse;
import dev.langchain4j.http.client.sse.ServerSentEventListener;
import dev.langchain4j.http.client.sse.ServerSentEventParser;
import dev.langchain4j.model.anthropic.AnthropicChatModel;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import dev.llmquota.QuotaExhaustedException;
import dev.llmquota.RateLimitedException;
import dev.llmquota.client.langchain4j.LlmQuotaHttpClientBuilder;
import dev.llmquota.core.Pool;
import dev.llmquota.core.QuotaEngine;
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
 * LangChain4j's OpenAI and Anthropic models, built by hand with llm-quota's
 * {@code LlmQuotaHttpClientBuilder} bean and LangChain4j's own retry settings at their
 * defaults, calling the simulator.
 */
class LangChain4jGovernanceTests {

	private static final Duration PATIENCE = SimulatedApplication.PATIENCE;

	/**
	 * A simulator, an application with the starter, and LangChain4j's attempts counted.
	 */
	private static final class Setup implements AutoCloseable {

		final SimulatedApplication app;

		final ProviderSimulator simulator;

		final ConfigurableApplicationContext context;

		final Counting builder;

		Setup(Consumer<ProviderSimulatorBuilder> simulator, String... properties) {
			this.app = SimulatedApplication.start(simulator,
					(base) -> SimulatedApplication.openAiAndAnthropic(base, properties));
			this.simulator = this.app.simulator();
			this.context = this.app.context();
			this.builder = new Counting(this.context.getBean(LlmQuotaHttpClientBuilder.class), new AtomicInteger());
		}

		ChatModel openAi() {
			return OpenAiChatModel.builder()
				.baseUrl(this.simulator.baseUrl() + "/v1")
				.apiKey("test-key")
				.modelName("gpt-4o")
				.maxTokens(20)
				.httpClientBuilder(this.builder)
				.build();
		}

		OpenAiStreamingChatModel openAiStreaming() {
			return OpenAiStreamingChatModel.builder()
				.baseUrl(this.simulator.baseUrl() + "/v1")
				.apiKey("test-key")
				.modelName("gpt-4o")
				.maxTokens(20)
				.httpClientBuilder(this.builder)
				.build();
		}

		ChatModel anthropic() {
			return AnthropicChatModel.builder()
				.baseUrl(this.simulator.baseUrl() + "/v1/")
				.apiKey("test-key")
				.modelName("claude-sonnet-4-5")
				.maxTokens(20)
				.httpClientBuilder(this.builder)
				.build();
		}

		Pool pool(String provider, String model) {
			return this.app.pool(provider, model);
		}

		@Override
		public void close() {
			this.app.close();
		}

	}

	@Test
	void fourCallsAtOnceOnOneSlotArePacedAndAStreamIsChargedItsUsage() throws Exception {
		try (Setup setup = new Setup((sim) -> sim.model("gpt-4o", (limits) -> limits.concurrentRequests(1)))) {
			ChatModel model = setup.openAi();
			List<CompletableFuture<String>> calls = IntStream.range(0, 4)
				.mapToObj((i) -> CompletableFuture.supplyAsync(() -> model.chat("Call " + i + ".")))
				.toList();
			for (CompletableFuture<String> call : calls) {
				assertThat(call.get(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isNotEmpty();
			}
			// the simulator logs a completed call as its last byte goes out: the caller
			// may be first
			await().atMost(PATIENCE).until(() -> setup.simulator.requestLog().size() == 4);
			assertThat(setup.simulator.requestLog().records()).hasSize(4)
				.allSatisfy((record) -> assertThat(record.outcome()).isEqualTo(RequestRecord.Outcome.COMPLETED));
			Pool pool = setup.pool("openai", "gpt-4o");
			assertThat(pool.stats().billedOutput()).as("each call's usage in the books").isEqualTo(20);
			CompletableFuture<ChatResponse> streamed = new CompletableFuture<>();
			setup.openAiStreaming().chat("Tell a story.", handler(streamed));
			assertThat(streamed.get(PATIENCE.toSeconds(), TimeUnit.SECONDS).aiMessage().text()).isNotEmpty();
			await().atMost(PATIENCE).until(() -> pool.stats().billedOutput() == 25);
			assertThat(setup.context.getBean(QuotaEngine.class).inFlight(pool.account())).isZero();
		}
	}

	@Test
	void theEntrysCredentialsReachTheProviderInPlaceOfTheModelsOwnKey() {
		try (Setup setup = new Setup((sim) -> sim.requireHeader("authorization", "Bearer entry-key"),
				"llm.quota.providers.openai.headers.authorization=Bearer entry-key")) {
			assertThat(setup.openAi().chat("Hello.")).isNotEmpty();
		}
	}

	@Test
	void anthropicCallsAreGovernedToo() {
		try (Setup setup = new Setup((sim) -> {
		})) {
			assertThat(setup.anthropic().chat("Hello.")).isNotEmpty();
			assertThat(setup.pool("anthropic", "claude-sonnet-4-5").stats().billedOutput()).isEqualTo(5);
		}
	}

	/**
	 * A provider that refuses every call sees exactly llm-quota's attempts, and
	 * LangChain4j, its retries at their default (2), makes one: what it gets is a
	 * {@code NonRetriableException}.
	 */
	@Test
	void aProviderRefusingEveryCallSeesExactlyLlmQuotasAttemptsAndLangChain4jMakesOne() throws Exception {
		try (Setup setup = new Setup((sim) -> sim.faultRate(Fault.RATE_LIMITED, 1.0),
				"llm.quota.retry.max-attempts=3")) {
			setup.simulator.faults().rateLimitWait(Duration.ofMillis(20));
			assertThatException().isThrownBy(() -> setup.openAi().chat("Hello."))
				.isInstanceOf(dev.langchain4j.exception.NonRetriableException.class)
				.withCauseInstanceOf(RateLimitedException.class);
			assertThat(setup.simulator.requestLog().records()).as("requests of one call").hasSize(3);
			assertThat(setup.builder.attempts()).as("LangChain4j's attempts").isOne();
			CompletableFuture<ChatResponse> streamed = new CompletableFuture<>();
			setup.openAiStreaming().chat("Hello.", handler(streamed));
			assertThat(streamed).failsWithin(PATIENCE)
				.withThrowableThat()
				.havingRootCause()
				.isInstanceOf(RateLimitedException.class);
			assertThat(setup.simulator.requestLog().records()).as("requests of a call and a stream").hasSize(6);
			assertThat(setup.builder.attempts()).isEqualTo(2);
		}
	}

	/**
	 * An overloaded provider (503) on every attempt: llm-quota retries it, and hands the
	 * last answer on as a failure LangChain4j does not retry again. It got an HTTP error
	 * LangChain4j maps to one it retries, and each of its retries ran llm-quota's
	 * attempts again: the provider saw them three times over.
	 */
	@Test
	void anOverloadedProviderSeesExactlyLlmQuotasAttemptsAndLangChain4jMakesOne() {
		try (Setup setup = new Setup((sim) -> sim.faultRate(Fault.OVERLOADED, 1.0), "llm.quota.retry.max-attempts=2",
				"llm.quota.retry.initial-backoff=10ms")) {
			assertThatException().isThrownBy(() -> setup.openAi().chat("Hello."))
				.isInstanceOf(dev.langchain4j.exception.NonRetriableException.class);
			assertThat(setup.simulator.requestLog().records()).as("requests of one call").hasSize(2);
			assertThat(setup.builder.attempts()).as("LangChain4j's attempts").isOne();
		}
	}

	@Test
	void aSpentQuotaReachesTheProviderOnceAndLangChain4jAttemptsOnce() {
		try (Setup setup = new Setup((sim) -> sim.exhausted(true))) {
			ChatModel model = setup.openAi();
			for (int i = 0; i < 2; i++) {
				assertThatException().isThrownBy(() -> model.chat("Hello."))
					.withCauseInstanceOf(QuotaExhaustedException.class);
			}
			assertThat(setup.simulator.requestLog().records()).hasSize(1);
			assertThat(setup.builder.attempts()).as("LangChain4j's attempts, one per call").isEqualTo(2);
		}
	}

	private static StreamingChatResponseHandler handler(CompletableFuture<ChatResponse> result) {
		return new StreamingChatResponseHandler() {

			@Override
			public void onCompleteResponse(ChatResponse response) {
				result.complete(response);
			}

			@Override
			public void onError(Throwable error) {
				result.completeExceptionally(error);
			}

		};
	}

	/** LangChain4j's attempts, counted at the HTTP client it calls for each. */
	private record Counting(HttpClientBuilder delegate, AtomicInteger count) implements HttpClientBuilder {

		int attempts() {
			return this.count.get();
		}

		@Override
		public Duration connectTimeout() {
			return this.delegate.connectTimeout();
		}

		@Override
		public HttpClientBuilder connectTimeout(Duration timeout) {
			return new Counting(this.delegate.connectTimeout(timeout), this.count);
		}

		@Override
		public Duration readTimeout() {
			return this.delegate.readTimeout();
		}

		@Override
		public HttpClientBuilder readTimeout(Duration timeout) {
			return new Counting(this.delegate.readTimeout(timeout), this.count);
		}

		@Override
		public HttpClient build() {
			HttpClient client = this.delegate.build();
			return new HttpClient() {

				@Override
				public SuccessfulHttpResponse execute(HttpRequest request) {
					Counting.this.count.incrementAndGet();
					return client.execute(request);
				}

				@Override
				public void execute(HttpRequest request, ServerSentEventParser parser,
						ServerSentEventListener listener) {
					Counting.this.count.incrementAndGet();
					client.execute(request, parser, listener);
				}

			};
		}

	}

}
