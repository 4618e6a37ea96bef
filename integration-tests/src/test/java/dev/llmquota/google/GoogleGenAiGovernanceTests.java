package dev.llmquota.google;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.IntStream;

import com.google.genai.Client;
import com.google.genai.ResponseStream;
import com.google.genai.types.ClientOptions;
import com.google.genai.types.GenerateContentConfig;
import com.google.genai.types.GenerateContentResponse;
import com.google.genai.types.HttpOptions;
import dev.llmquota.QuotaExhaustedException;
import dev.llmquota.client.okhttp.LlmQuotaOkHttpInterceptor;
import dev.llmquota.core.Pool;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.it.SimulatedApplication;
import dev.llmquota.test.simulator.Fault;
import dev.llmquota.test.simulator.ProviderSimulator;
import dev.llmquota.test.simulator.ProviderSimulatorBuilder;
import dev.llmquota.test.simulator.RequestRecord;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.Test;

import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.google.genai.GoogleGenAiChatModel;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

/**
 * Google's GenAI SDK given an OkHttp client with llm-quota's interceptor, its own retry
 * settings at their defaults (five attempts of 429s and server errors, below the
 * application's interceptors): llm-quota switches them off on the calls it governs, so
 * the provider sees exactly llm-quota's attempts.
 */
class GoogleGenAiGovernanceTests {

	private static final Duration PATIENCE = SimulatedApplication.PATIENCE;

	private static final String MODEL = "gemini-2.5-flash";

	/**
	 * An application that gives Spring AI's Google GenAI model its client: Spring AI's
	 * own backs off for a {@code Client} bean of the context.
	 */
	@Configuration(proxyBeanMethods = false)
	static class WithClient {

		@Bean
		Client googleGenAiClient(LlmQuotaOkHttpInterceptor interceptor, Environment environment) {
			return Client.builder()
				.apiKey("test-key")
				.httpOptions(HttpOptions.builder().baseUrl(environment.getProperty("simulator.base-url")).build())
				.clientOptions(ClientOptions.builder()
					.customHttpClient(new OkHttpClient.Builder().addInterceptor(interceptor).build())
					.build())
				.build();
		}

	}

	private static final class Setup implements AutoCloseable {

		final SimulatedApplication app;

		final ProviderSimulator simulator;

		final ConfigurableApplicationContext context;

		final AtomicInteger attempts = new AtomicInteger();

		Setup(Consumer<ProviderSimulatorBuilder> simulator, String... properties) {
			this(null, simulator, properties);
		}

		Setup(Class<?> application, Consumer<ProviderSimulatorBuilder> simulator, String... properties) {
			this.app = SimulatedApplication.start(simulator, (base) -> {
				List<String> all = new ArrayList<>(List.of("spring.ai.openai.api-key=test-key",
						"spring.ai.anthropic.api-key=test-key", "spring.ai.google.genai.api-key=test-key",
						"spring.ai.google.genai.chat.options.model=" + MODEL,
						"spring.ai.google.genai.chat.options.max-output-tokens=20", "simulator.base-url=" + base,
						"llm.quota.providers.gemini.base-url=" + base, "llm.quota.providers.gemini.dialect=gemini",
						"llm.quota.providers.gemini.models.[" + MODEL + "].requests-per-minute=600",
						"llm.quota.providers.gemini.models.[" + MODEL + "].concurrent-requests=1"));
				all.addAll(List.of(properties));
				return all;
			}, (application != null) ? new Class<?>[] { application } : new Class<?>[0]);
			this.simulator = this.app.simulator();
			this.context = this.app.context();
		}

		Client client() {
			OkHttpClient okHttp = new OkHttpClient.Builder().addInterceptor((chain) -> {
				// outside llm-quota's: the SDK's own calls
				this.attempts.incrementAndGet();
				return chain.proceed(chain.request());
			}).addInterceptor(this.context.getBean(LlmQuotaOkHttpInterceptor.class)).build();
			return Client.builder()
				.apiKey("test-key")
				.httpOptions(HttpOptions.builder().baseUrl(this.simulator.baseUrl()).build())
				.clientOptions(ClientOptions.builder().customHttpClient(okHttp).build())
				.build();
		}

		Pool pool() {
			return this.context.getBean(QuotaEngine.class).pool("gemini", MODEL);
		}

		int inFlight() {
			return this.app.inFlight(pool());
		}

		@Override
		public void close() {
			this.app.close();
		}

	}

	private static GenerateContentConfig config() {
		return GenerateContentConfig.builder().maxOutputTokens(20).build();
	}

	@Test
	void callsArePacedAndAStreamIsChargedItsUsage() throws Exception {
		try (Setup setup = new Setup((sim) -> sim.model(MODEL, (limits) -> limits.concurrentRequests(1)))) {
			Client client = setup.client();
			List<CompletableFuture<?>> calls = new ArrayList<>();
			IntStream.range(0, 4)
				.forEach((i) -> calls.add(CompletableFuture
					.supplyAsync(() -> client.models.generateContent(MODEL, "Call " + i, config()))));
			for (CompletableFuture<?> call : calls) {
				call.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
			}
			// the simulator logs a completed call as its last byte goes out: the caller
			// may be first
			await().atMost(PATIENCE).until(() -> setup.simulator.requestLog().size() == 4);
			assertThat(setup.simulator.requestLog().records()).hasSize(4)
				.allSatisfy((record) -> assertThat(record.outcome()).isEqualTo(RequestRecord.Outcome.COMPLETED));
			assertThat(setup.pool().stats().billedOutput()).isEqualTo(20);
			int chunks = 0;
			try (ResponseStream<GenerateContentResponse> stream = client.models.generateContentStream(MODEL, "Stream.",
					config())) {
				for (GenerateContentResponse ignored : stream) {
					chunks++;
				}
			}
			assertThat(chunks).isPositive();
			await().atMost(PATIENCE).until(() -> setup.pool().stats().billedOutput() == 25 && setup.inFlight() == 0);
		}
	}

	@Test
	void aProviderRefusingEveryCallSeesExactlyLlmQuotasAttempts() {
		try (Setup setup = new Setup((sim) -> sim.faultRate(Fault.RATE_LIMITED, 1.0),
				"llm.quota.retry.max-attempts=3")) {
			setup.simulator.faults().rateLimitWait(Duration.ofMillis(20));
			assertThatException().isThrownBy(() -> setup.client().models.generateContent(MODEL, "Hello.", config()));
			assertThat(setup.simulator.requestLog().records()).as("requests of one call").hasSize(3);
			assertThat(setup.attempts.get()).as("the SDK's calls").isOne();
		}
	}

	@Test
	void aSpentQuotaReachesTheProviderOnce() {
		try (Setup setup = new Setup((sim) -> sim.exhausted(true))) {
			Client client = setup.client();
			assertThatException().isThrownBy(() -> client.models.generateContent(MODEL, "Hello.", config()));
			assertThatException().isThrownBy(() -> client.models.generateContent(MODEL, "Hello.", config()))
				.isInstanceOf(QuotaExhaustedException.class);
			assertThat(setup.simulator.requestLog().records()).hasSize(1);
			assertThat(setup.attempts.get()).isEqualTo(2);
		}
	}

	/**
	 * Spring AI's Google GenAI model, on a client bean built with llm-quota's
	 * interceptor, Spring AI's and the SDK's retries at their defaults.
	 */
	@Test
	void springAisGoogleGenAiModelIsGovernedThroughTheClientBean() {
		try (Setup setup = new Setup(WithClient.class, (sim) -> {
		})) {
			ChatModel model = setup.context.getBean(GoogleGenAiChatModel.class);
			assertThat(model.call("Hello.")).isNotEmpty();
			assertThat(setup.pool().stats().billedOutput()).isEqualTo(5);
		}
		try (Setup setup = new Setup(WithClient.class, (sim) -> sim.faultRate(Fault.RATE_LIMITED, 1.0),
				"llm.quota.retry.max-attempts=3")) {
			setup.simulator.faults().rateLimitWait(Duration.ofMillis(20));
			ChatModel model = setup.context.getBean(GoogleGenAiChatModel.class);
			assertThatException().isThrownBy(() -> model.call("Hello."));
			assertThat(setup.simulator.requestLog().records()).as("requests of one call").hasSize(3);
		}
	}

}
