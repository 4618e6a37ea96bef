package dev.llmquota.client;

import java.util.Map;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.ai.retry.RetryUtils;
import org.springframework.ai.retry.TransientAiException;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.retry.RetryPolicy;
import org.springframework.core.retry.RetryTemplate;
import org.springframework.http.MediaType;
import org.springframework.web.client.ResponseErrorHandler;
import org.springframework.web.client.RestClient;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import dev.llmquota.core.PoolStats;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.web.reactive.function.client.WebClientResponseException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

/**
 * Shadow mode in front of a simulated provider: calls go at once, the provider's refusals
 * reach the caller as they came, and llm-quota reports what it would have done.
 */
class ShadowModeAgainstSimulatorTests {

	private static final Duration PATIENCE = Duration.ofSeconds(20);

	@Test
	void callsGoAtOnceRefusalsPassThroughAndWhatEnforceModeWouldHaveDoneIsReported() {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OPENAI,
				(sim) -> sim.window(Duration.ofSeconds(10))
					.model(SimulatedProvider.MODEL, (limits) -> limits.requestsPerMinute(60).tokensPerMinute(1_000_000))
					.latency((latency) -> latency.timeToFirstToken(Duration.ofMillis(20)).fixedOutputTokens(5)),
				"mode=shadow", "models.test-model.requests-per-minute=60", "in-flight-gate=false",
				"llm.quota.max-wait=1s")) {
			// 30 calls at once: the provider's window takes 10, enforce mode would have
			// sent about 2 at once and made the rest wait, most beyond max-wait.
			AtomicInteger answered = new AtomicInteger();
			AtomicInteger refusedByProvider = new AtomicInteger();
			long started = System.nanoTime();
			Flux.range(0, 30)
				.flatMap((i) -> provider.send(20, "Summarise this.")
					.doOnNext((body) -> answered.incrementAndGet())
					.onErrorResume(WebClientResponseException.TooManyRequests.class, (ex) -> {
						refusedByProvider.incrementAndGet();
						return Mono.empty();
					}), 30)
				.blockLast(PATIENCE);
			assertThat(Duration.ofNanos(System.nanoTime() - started)).as("nothing waited for admission")
				.isLessThan(Duration.ofSeconds(5));
			assertThat(answered.get() + refusedByProvider.get()).isEqualTo(30);
			assertThat(refusedByProvider.get()).as("the provider's 429s reached the caller, unretried").isPositive();
			assertThat(provider.simulator.requestLog().size()).as("one attempt per call").isEqualTo(30);
			await().atMost(PATIENCE).untilAsserted(() -> {
				PoolStats.Shadow shadow = provider.pool().stats().shadow();
				assertThat(shadow.delayed() + shadow.refused()).as("calls enforce mode would have held")
					.isGreaterThan(20);
			});
		}
	}

	/**
	 * Where llm-quota decides nothing (shadow mode, {@code mode: off}), a refusal reaches
	 * a client that retries by itself unmarked, and its retry runs as without llm-quota:
	 * Spring AI's error handler (which llm-quota wraps) and retry template, as its Ollama
	 * model calls.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "shadow", "off" })
	void aClientsOwnRetryRunsWhereLlmQuotaDecidesNothing(String mode) {
		try (LoopbackServer server = new LoopbackServer(503, Map.of("content-type", "application/json"),
				"{\"error\":{\"message\":\"Overloaded\"}}");
				GovernedApp app = GovernedApp.startWith(SpringAiHandler.class,
						"llm.quota.providers.openai.base-url=" + server.baseUrl(),
						"llm.quota.providers.openai.dialect=openai", "llm.quota.providers.openai.mode=" + mode,
						"llm.quota.providers.openai.models.gpt-4o.requests-per-minute=600",
						"llm.quota.retry.initial-backoff=10ms", "llm.quota.retry.max-backoff=20ms")) {
			RestClient client = app.context()
				.getBean(RestClient.Builder.class)
				.defaultStatusHandler(app.context().getBean(ResponseErrorHandler.class))
				.build();
			RetryTemplate retry = new RetryTemplate(RetryPolicy.builder()
				.maxRetries(3)
				.includes(TransientAiException.class)
				.delay(Duration.ofMillis(10))
				.build());
			assertThatException().isThrownBy(() -> retry.execute(() -> client.post()
				.uri(server.baseUrl() + "/v1/chat/completions")
				.contentType(MediaType.APPLICATION_JSON)
				.body("{\"model\":\"gpt-4o\",\"max_tokens\":50,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}")
				.retrieve()
				.body(String.class)));
			assertThat(server.requests()).as("Spring AI's attempts, as without llm-quota").hasSize(4);
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class SpringAiHandler {

		/** Spring AI's own handler, as its retry auto-configuration defines it. */
		@Bean
		ResponseErrorHandler responseErrorHandler() {
			return RetryUtils.DEFAULT_RESPONSE_ERROR_HANDLER;
		}

	}

}
