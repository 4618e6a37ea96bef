package dev.llmquota.client;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import dev.llmquota.core.PoolStats;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.web.reactive.function.client.WebClientResponseException;

import static org.assertj.core.api.Assertions.assertThat;
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

}
