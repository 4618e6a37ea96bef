package dev.llmquota.springai;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import dev.llmquota.LlmQuota;
import dev.llmquota.QuotaExhaustedException;
import dev.llmquota.QuotaWaitTimeoutException;
import dev.llmquota.core.Pool;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.it.SimulatedApplication;
import dev.llmquota.test.simulator.Fault;
import dev.llmquota.test.simulator.ProviderSimulator;
import dev.llmquota.test.simulator.ProviderSimulatorBuilder;
import dev.llmquota.test.simulator.RequestRecord;
import org.junit.jupiter.api.Test;

import org.springframework.ai.anthropic.AnthropicChatModel;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.ollama.OllamaChatModel;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

/**
 * Spring AI's OpenAI and Anthropic chat models (their SDK clients over OkHttp) and its
 * Ollama model (the context's HTTP client builders), with nothing but the starter and
 * properties, calling the simulator.
 */
class SpringAiGovernanceTests {

	private static final Duration PATIENCE = SimulatedApplication.PATIENCE;

	/** A simulator and an application with one provider entry per Spring AI model. */
	private static final class Setup implements AutoCloseable {

		final SimulatedApplication app;

		final ProviderSimulator simulator;

		final ConfigurableApplicationContext context;

		Setup(Consumer<ProviderSimulatorBuilder> simulator, String... properties) {
			this.app = SimulatedApplication.start((sim) -> {
				sim.latency((latency) -> latency.timeToFirstToken(Duration.ZERO).fixedOutputTokens(5));
				simulator.accept(sim);
			}, (base) -> {
				List<String> all = new ArrayList<>(List.of("spring.ai.openai.api-key=test-key",
						"spring.ai.openai.base-url=" + base + "/v1", "spring.ai.openai.chat.options.model=gpt-4o",
						"spring.ai.anthropic.api-key=test-key", "spring.ai.anthropic.base-url=" + base,
						"spring.ai.anthropic.chat.options.model=claude-sonnet-4-5", "spring.ai.ollama.base-url=" + base,
						"spring.ai.ollama.chat.options.model=llama3",
						"llm.quota.providers.openai.base-url=" + base + "/v1",
						"llm.quota.providers.openai.models.gpt-4o.tokens-per-minute=600000",
						"llm.quota.providers.anthropic.base-url=" + base + "/v1/messages",
						"llm.quota.providers.anthropic.dialect=anthropic",
						"llm.quota.providers.anthropic.models.claude-sonnet-4-5.input-tokens-per-minute=600000",
						"llm.quota.providers.ollama.base-url=" + base + "/api",
						"llm.quota.providers.ollama.dialect=ollama",
						"llm.quota.providers.ollama.models.llama3.requests-per-minute=600"));
				all.addAll(List.of(properties));
				return all;
			});
			this.simulator = this.app.simulator();
			this.context = this.app.context();
		}

		Pool pool(String provider, String model) {
			return this.app.pool(provider, model);
		}

		@Override
		public void close() {
			this.app.close();
		}

	}

	/**
	 * OpenAI's and Anthropic's models over their SDKs, and Ollama's through the context's
	 * builders: each one's call and stream governed, in one context.
	 */
	@Test
	void eachModelsCallAndStreamAreGoverned() {
		try (Setup setup = new Setup((sim) -> {
		})) {
			for (String vendor : VENDORS) {
				setup.simulator.requestLog().clear();
				assertGoverned(setup, model(setup, vendor), setup.pool(vendor, MODELS.get(vendor)));
			}
		}
	}

	@Test
	void aRateLimitIsWaitedOutBeforeSpringAiSeesIt() {
		try (Setup setup = new Setup(
				(sim) -> sim.window(Duration.ofSeconds(1)).model("gpt-4o", (limits) -> limits.requestsPerMinute(60)),
				"llm.quota.headroom=1.0", "llm.quota.max-wait=10s")) {
			// another client of the account takes this second's only request
			WebClient.create(setup.simulator.baseUrl())
				.post()
				.uri("/v1/chat/completions")
				.bodyValue(Map.of("model", "gpt-4o", "max_tokens", 5, "messages",
						List.of(Map.of("role", "user", "content", "Elsewhere."))))
				.retrieve()
				.toBodilessEntity()
				.block(PATIENCE);
			assertThat(setup.context.getBean(OpenAiChatModel.class).call("Here.")).isNotEmpty();
			await().atMost(PATIENCE).until(() -> setup.simulator.requestLog().size() == 3);
			assertThat(setup.simulator.requestLog().records()).extracting(RequestRecord::outcome)
				.containsExactly(RequestRecord.Outcome.COMPLETED, RequestRecord.Outcome.REFUSED,
						RequestRecord.Outcome.COMPLETED);
		}
	}

	@Test
	void aSpentQuotaReachesTheProviderOnceAndTheSdkDoesNotRetryIt() {
		try (Setup setup = new Setup((sim) -> sim.exhausted(true))) {
			ChatModel model = setup.context.getBean(OpenAiChatModel.class);
			// the provider answered: its answer, marked not to be retried by the SDK
			assertThatException().isThrownBy(() -> model.call("Hello."))
				.satisfies((ex) -> assertThat(causes(ex))
					.anySatisfy((cause) -> assertThat(cause.getMessage()).contains("429")));
			// then llm-quota fails fast, before the provider: the contract exception
			assertThatException().isThrownBy(() -> model.call("Hello."))
				.satisfies((ex) -> assertThat(causes(ex)).hasAtLeastOneElementOfType(QuotaExhaustedException.class));
			await().atMost(PATIENCE).until(() -> setup.simulator.requestLog().size() >= 1);
			assertThat(setup.simulator.requestLog().records()).hasSize(1);
		}
	}

	/**
	 * Spring AI's OpenAI model addressed to a route by its base URL: its calls and
	 * streams go to the target free first, each rewritten for it (URL, model, key).
	 */
	@Test
	void openAiThroughARouteGoesToTheTargetFreeFirst() {
		try (ProviderSimulator second = ProviderSimulator.builder()
			.latency((latency) -> latency.timeToFirstToken(Duration.ZERO).fixedOutputTokens(5))
			.requireHeader("Authorization", "Bearer second-key")
			.start(); Setup setup = new Setup((sim) -> {
			}, "spring.ai.openai.base-url=" + LlmQuota.route("gpt4o"),
					"llm.quota.providers.second.base-url=" + second.baseUrl() + "/v1",
					"llm.quota.providers.second.dialect=openai",
					"llm.quota.providers.second.headers.Authorization=Bearer second-key",
					"llm.quota.providers.second.models.gpt-4o-mini.tokens-per-minute=600000",
					"llm.quota.routes.gpt4o.targets[0].provider=openai",
					"llm.quota.routes.gpt4o.targets[0].model=gpt-4o",
					"llm.quota.routes.gpt4o.targets[1].provider=second",
					"llm.quota.routes.gpt4o.targets[1].model=gpt-4o-mini")) {
			ChatModel model = setup.context.getBean(OpenAiChatModel.class);
			assertThat(model.call("Hello.")).isNotEmpty();
			// the first account refuses the next call for a minute: the route moves it on
			setup.simulator.faults().rateLimitWait(Duration.ofMinutes(1)).next(Fault.RATE_LIMITED);
			assertThat(model.call("Hello again.")).isNotEmpty();
			assertThat(model.stream("And a stream.").collectList().block(PATIENCE)).isNotEmpty();
			await().atMost(PATIENCE).until(() -> second.requestLog().size() == 2);
			assertThat(second.requestLog().records()).extracting(RequestRecord::model).containsOnly("gpt-4o-mini");
			assertThat(second.requestLog().records()).extracting(RequestRecord::stream).containsExactly(false, true);
			assertThat(setup.simulator.requestLog().refused()).hasSize(1);
		}
	}

	/**
	 * A provider that refuses every call: the SDK's and Spring AI's own retries are left
	 * at their defaults, and the provider sees exactly llm-quota's attempts.
	 */
	@Test
	void aProviderRefusingEveryCallSeesExactlyLlmQuotasAttemptsAndNoMore() {
		try (Setup setup = new Setup(
				(sim) -> sim.faultRate(Fault.RATE_LIMITED, 1.0).latency((latency) -> latency.fixedOutputTokens(5)),
				"llm.quota.retry.max-attempts=3")) {
			setup.simulator.faults().rateLimitWait(Duration.ofMillis(50));
			assertEachModelsCallAndStreamReachIt(setup, 3);
		}
	}

	/**
	 * An overloaded provider (503, or Anthropic's 529) on every call: llm-quota's
	 * attempts reach it, and neither the SDK nor Spring AI's retry template runs them
	 * again.
	 */
	@Test
	void anOverloadedProviderSeesExactlyLlmQuotasAttemptsAndNoMore() {
		try (Setup setup = new Setup(
				(sim) -> sim.faultRate(Fault.OVERLOADED, 1.0).latency((latency) -> latency.fixedOutputTokens(5)),
				"llm.quota.retry.max-attempts=2", "llm.quota.retry.initial-backoff=10ms",
				"llm.quota.retry.max-backoff=20ms", "spring.ai.retry.backoff.initial-interval=10ms",
				"spring.ai.retry.backoff.max-interval=20ms")) {
			assertEachModelsCallAndStreamReachIt(setup, 2);
		}
	}

	/**
	 * A call llm-quota cannot admit fails once, within max-wait and a second: the SDK
	 * does not wait out max-wait again for each of its retries.
	 */
	@Test
	void aCallThatCannotBeAdmittedFailsOnceWithinMaxWait() {
		List<String> oneAMinute = new ArrayList<>(List.of("llm.quota.max-wait=1s", "llm.quota.headroom=1.0"));
		VENDORS.forEach((vendor) -> oneAMinute
			.add("llm.quota.providers." + vendor + ".models." + MODELS.get(vendor) + ".requests-per-minute=1"));
		try (Setup setup = new Setup((sim) -> {
		}, oneAMinute.toArray(String[]::new))) {
			for (String vendor : VENDORS) {
				setup.simulator.requestLog().clear();
				ChatModel model = model(setup, vendor);
				assertThat(model.call("First.")).isNotEmpty();
				long start = System.nanoTime();
				assertThatException().isThrownBy(() -> model.call("Second."))
					.satisfies(
							(ex) -> assertThat(causes(ex)).hasAtLeastOneElementOfType(QuotaWaitTimeoutException.class));
				assertThat(Duration.ofNanos(System.nanoTime() - start)).as(vendor).isLessThan(Duration.ofSeconds(2));
				start = System.nanoTime();
				assertThatException().isThrownBy(() -> model.stream("Third.").collectList().block(PATIENCE));
				assertThat(Duration.ofNanos(System.nanoTime() - start)).as(vendor).isLessThan(Duration.ofSeconds(2));
				assertThat(setup.simulator.requestLog().records()).as(vendor).hasSize(1);
			}
		}
	}

	/** Spring AI's models, each with its own provider entry. */
	private static final List<String> VENDORS = List.of("openai", "anthropic", "ollama");

	private static final Map<String, String> MODELS = Map.of("openai", "gpt-4o", "anthropic", "claude-sonnet-4-5",
			"ollama", "llama3");

	private static ChatModel model(Setup setup, String vendor) {
		return switch (vendor) {
			case "openai" -> setup.context.getBean(OpenAiChatModel.class);
			case "anthropic" -> setup.context.getBean(AnthropicChatModel.class);
			default -> setup.context.getBean(OllamaChatModel.class);
		};
	}

	private static void assertGoverned(Setup setup, ChatModel model, Pool pool) {
		assertThat(model.call("Summarise the quarter.")).isNotEmpty();
		assertThat(model.stream("Tell a story.").collectList().block(PATIENCE)).isNotEmpty();
		await().atMost(PATIENCE).until(() -> setup.simulator.requestLog().size() == 2);
		assertThat(setup.simulator.requestLog().records()).extracting(RequestRecord::status).containsOnly(200);
		assertThat(pool.stats().inFlightCalls()).isZero();
		assertThat(pool.stats().outputSamples()).as("both calls' usage reached the books").isEqualTo(2);
		assertThat(pool.stats().billedOutput()).isPositive();
	}

	/**
	 * Each model's failing call, then its failing stream, reaches the provider exactly
	 * {@code attempts} times.
	 */
	private static void assertEachModelsCallAndStreamReachIt(Setup setup, int attempts) {
		for (String vendor : VENDORS) {
			setup.simulator.requestLog().clear();
			ChatModel model = model(setup, vendor);
			assertThatException().isThrownBy(() -> model.call("Hello."));
			assertThat(setup.simulator.requestLog().records()).as(vendor + ": requests of one call").hasSize(attempts);
			assertThatException().isThrownBy(() -> model.stream("Hello.").collectList().block(PATIENCE));
			assertThat(setup.simulator.requestLog().records()).as(vendor + ": requests of a call and a stream")
				.hasSize(2 * attempts);
		}
	}

	private static List<Throwable> causes(Throwable failure) {
		List<Throwable> causes = new ArrayList<>();
		for (Throwable cause = failure; cause != null && !causes.contains(cause); cause = cause.getCause()) {
			causes.add(cause);
		}
		return causes;
	}

}
