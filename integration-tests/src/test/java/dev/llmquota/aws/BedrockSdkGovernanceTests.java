package dev.llmquota.aws;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.IntStream;

import dev.llmquota.QuotaExhaustedException;
import dev.llmquota.RateLimitedException;
import dev.llmquota.client.aws.LlmQuotaAwsHttpClients;
import dev.llmquota.core.Pool;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.it.SimulatedApplication;
import dev.llmquota.test.simulator.Fault;
import dev.llmquota.test.simulator.ProviderSimulator;
import dev.llmquota.test.simulator.ProviderSimulatorBuilder;
import dev.llmquota.test.simulator.RequestRecord;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.bedrockruntime.BedrockRuntimeAsyncClient;
import software.amazon.awssdk.services.bedrockruntime.BedrockRuntimeClient;
import software.amazon.awssdk.services.bedrockruntime.model.ContentBlock;
import software.amazon.awssdk.services.bedrockruntime.model.ConversationRole;
import software.amazon.awssdk.services.bedrockruntime.model.ConverseRequest;
import software.amazon.awssdk.services.bedrockruntime.model.ConverseStreamRequest;
import software.amazon.awssdk.services.bedrockruntime.model.ConverseStreamResponseHandler;
import software.amazon.awssdk.services.bedrockruntime.model.Message;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

/**
 * The AWS SDK's Bedrock clients, synchronous and asynchronous, built with llm-quota's
 * HTTP client decorators and the SDK's retry strategy at its default, calling the
 * simulator through {@code endpointOverride}. The SDK's own attempts are counted by an
 * execution interceptor, which runs before each transmission.
 */
class BedrockSdkGovernanceTests {

	private static final Duration PATIENCE = SimulatedApplication.PATIENCE;

	private static final String MODEL = "test-model";

	private static final class Setup implements AutoCloseable {

		final SimulatedApplication app;

		final ProviderSimulator simulator;

		final ConfigurableApplicationContext context;

		final AtomicInteger attempts = new AtomicInteger();

		private final List<software.amazon.awssdk.utils.SdkAutoCloseable> clients = new ArrayList<>();

		Setup(Consumer<ProviderSimulatorBuilder> simulator, String... properties) {
			this.app = SimulatedApplication.start(simulator, (base) -> {
				List<String> all = new ArrayList<>(List.of("spring.ai.openai.api-key=test-key",
						"spring.ai.anthropic.api-key=test-key", "llm.quota.providers.bedrock.base-url=" + base,
						"llm.quota.providers.bedrock.dialect=bedrock",
						"llm.quota.providers.bedrock.models." + MODEL + ".requests-per-minute=600",
						"llm.quota.providers.bedrock.models." + MODEL + ".concurrent-requests=1"));
				all.addAll(List.of(properties));
				return all;
			});
			this.simulator = this.app.simulator();
			this.context = this.app.context();
		}

		private LlmQuotaAwsHttpClients aws() {
			return this.context.getBean(LlmQuotaAwsHttpClients.class);
		}

		private ExecutionInterceptor counting() {
			return new ExecutionInterceptor() {

				@Override
				public void beforeTransmission(Context.BeforeTransmission context,
						ExecutionAttributes executionAttributes) {
					Setup.this.attempts.incrementAndGet();
				}

			};
		}

		BedrockRuntimeClient client() {
			BedrockRuntimeClient client = BedrockRuntimeClient.builder()
				.endpointOverride(URI.create(this.simulator.baseUrl()))
				.region(Region.US_EAST_1)
				.credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("AKID", "secret")))
				.httpClient(aws().govern(Apache5HttpClient.create()))
				.overrideConfiguration((config) -> config.addExecutionInterceptor(counting()))
				.build();
			this.clients.add(client);
			return client;
		}

		BedrockRuntimeAsyncClient asyncClient() {
			BedrockRuntimeAsyncClient client = BedrockRuntimeAsyncClient.builder()
				.endpointOverride(URI.create(this.simulator.baseUrl()))
				.region(Region.US_EAST_1)
				.credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("AKID", "secret")))
				.httpClient(aws().govern(NettyNioAsyncHttpClient.create()))
				.overrideConfiguration((config) -> config.addExecutionInterceptor(counting()))
				.build();
			this.clients.add(client);
			return client;
		}

		Pool pool() {
			return this.context.getBean(QuotaEngine.class).pool("bedrock", MODEL);
		}

		int inFlight() {
			return this.app.inFlight(pool());
		}

		@Override
		public void close() {
			for (software.amazon.awssdk.utils.SdkAutoCloseable client : this.clients) {
				client.close();
			}
			this.app.close();
		}

	}

	private static ConverseRequest converse(String text) {
		return ConverseRequest.builder()
			.modelId(MODEL)
			.messages(Message.builder().role(ConversationRole.USER).content(ContentBlock.fromText(text)).build())
			.inferenceConfig((config) -> config.maxTokens(20))
			.build();
	}

	private static ConverseStreamRequest converseStream(String text) {
		return ConverseStreamRequest.builder()
			.modelId(MODEL)
			.messages(Message.builder().role(ConversationRole.USER).content(ContentBlock.fromText(text)).build())
			.inferenceConfig((config) -> config.maxTokens(20))
			.build();
	}

	@Test
	void theEntrysHeadersReachTheProviderFromTheSyncAndAsyncClients() throws Exception {
		try (Setup setup = new Setup((sim) -> sim.requireHeader("x-entry-key", "entry-key"),
				"llm.quota.providers.bedrock.headers.x-entry-key=entry-key")) {
			assertThat(setup.client().converse(converse("Hello.")).output()).isNotNull();
			assertThat(setup.asyncClient()
				.converse(converse("Hello."))
				.get(PATIENCE.toSeconds(), TimeUnit.SECONDS)
				.output()).isNotNull();
		}
	}

	@Test
	void converseCallsArePacedAndAConverseStreamIsChargedItsMetadata() throws Exception {
		try (Setup setup = new Setup((sim) -> sim.model(MODEL, (limits) -> limits.concurrentRequests(1)))) {
			BedrockRuntimeClient client = setup.client();
			List<CompletableFuture<?>> calls = new ArrayList<>();
			IntStream.range(0, 4)
				.forEach((i) -> calls.add(CompletableFuture.supplyAsync(() -> client.converse(converse("Call " + i)))));
			for (CompletableFuture<?> call : calls) {
				call.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
			}
			// the simulator logs a completed call as its last byte goes out: the caller
			// may be first
			await().atMost(PATIENCE).until(() -> setup.simulator.requestLog().size() == 4);
			assertThat(setup.simulator.requestLog().records()).hasSize(4)
				.allSatisfy((record) -> assertThat(record.outcome()).isEqualTo(RequestRecord.Outcome.COMPLETED));
			assertThat(setup.pool().stats().billedOutput()).isEqualTo(20);
			AtomicInteger events = new AtomicInteger();
			setup.asyncClient()
				.converseStream(converseStream("Stream."),
						ConverseStreamResponseHandler.builder().subscriber((event) -> events.incrementAndGet()).build())
				.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
			assertThat(events.get()).isPositive();
			await().atMost(PATIENCE).until(() -> setup.pool().stats().billedOutput() == 25 && setup.inFlight() == 0);
		}
	}

	/**
	 * The asynchronous SDK gives up on a call (its API call timeout, 200 ms) while the
	 * call waits for admission behind one that takes two seconds: the call leaves the
	 * queue and never reaches the provider, where it would spend quota for nobody.
	 */
	@Test
	void anAsyncCallTheSdkGaveUpOnWhileItWaitedIsNeverSent() throws Exception {
		try (Setup setup = new Setup((sim) -> sim.latency((latency) -> latency.timeToFirstToken(Duration.ofSeconds(2))),
				"llm.quota.max-wait=30s")) {
			BedrockRuntimeAsyncClient client = setup.asyncClient();
			CompletableFuture<?> first = client.converse(converse("First."));
			await().atMost(PATIENCE).until(() -> setup.inFlight() == 1);
			CompletableFuture<?> second = client.converse(converse("Second.").toBuilder()
				.overrideConfiguration((config) -> config.apiCallTimeout(Duration.ofMillis(200)))
				.build());
			assertThat(second).failsWithin(PATIENCE)
				.withThrowableThat()
				.havingRootCause()
				.isInstanceOf(ApiCallTimeoutException.class);
			first.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
			await().atMost(PATIENCE).until(() -> setup.app.waiting(setup.pool()) == 0 && setup.inFlight() == 0);
			assertThat(setup.simulator.requestLog().records()).as("only the first call was sent").hasSize(1);
		}
	}

	@Test
	void aProviderThrottlingEveryCallSeesExactlyLlmQuotasAttemptsAndTheSdkMakesOne() throws Exception {
		try (Setup setup = new Setup((sim) -> sim.faultRate(Fault.RATE_LIMITED, 1.0),
				"llm.quota.retry.max-attempts=3")) {
			setup.simulator.faults().rateLimitWait(Duration.ofMillis(20));
			assertThatException().isThrownBy(() -> setup.client().converse(converse("Hello.")))
				.withRootCauseInstanceOf(RateLimitedException.class);
			assertThat(setup.simulator.requestLog().records()).as("requests of a call").hasSize(3);
			assertThat(setup.attempts.get()).as("the SDK's attempts").isOne();
			CompletableFuture<Void> stream = setup.asyncClient()
				.converseStream(converseStream("Hello."),
						ConverseStreamResponseHandler.builder().subscriber((event) -> {
						}).build());
			assertThat(stream).failsWithin(PATIENCE)
				.withThrowableThat()
				.havingRootCause()
				.isInstanceOf(RateLimitedException.class);
			assertThat(setup.simulator.requestLog().records()).as("and of a stream").hasSize(6);
			assertThat(setup.attempts.get()).isEqualTo(2);
		}
	}

	@Test
	void aSpentQuotaReachesTheProviderOnceAndTheSdkAttemptsOncePerCall() throws Exception {
		try (Setup setup = new Setup((sim) -> sim.exhausted(true))) {
			BedrockRuntimeClient client = setup.client();
			for (int i = 0; i < 2; i++) {
				assertThatException().isThrownBy(() -> client.converse(converse("Hello.")))
					.withRootCauseInstanceOf(QuotaExhaustedException.class);
			}
			assertThat(setup.simulator.requestLog().records()).hasSize(1);
			assertThat(setup.attempts.get()).isEqualTo(2);
		}
	}

}
