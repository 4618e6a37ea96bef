package dev.llmquota.client;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

import dev.llmquota.QuotaExhaustedException;
import dev.llmquota.RateLimitedException;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.Demand;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.Pool;
import dev.llmquota.core.Priority;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.core.QuotaEvents;
import dev.llmquota.core.QuotaPermit;
import dev.llmquota.test.simulator.Fault;
import dev.llmquota.test.simulator.ProviderSimulator;
import dev.llmquota.test.simulator.RequestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.http.MediaType;
import org.springframework.http.client.BufferingClientHttpRequestFactory;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

/**
 * The same application calling through the auto-configured {@code RestClient.Builder}:
 * the blocking adapter behaves as the WebClient filter does.
 */
class RestClientGovernanceTests {

	private static final Duration PATIENCE = Duration.ofSeconds(15);

	private static String send(SimulatedProvider provider, int maxTokens, boolean stream, String prompt) {
		return provider.app.restClient()
			.post()
			.uri(provider.simulator.baseUrl() + provider.dialect.path(SimulatedProvider.MODEL, stream))
			.contentType(MediaType.APPLICATION_JSON)
			.body(provider.dialect.body(SimulatedProvider.MODEL, maxTokens, stream, prompt))
			.retrieve()
			.body(String.class);
	}

	@ParameterizedTest
	@EnumSource(DialectCase.class)
	void reservesTheOutputCeilingDuringTheCallAndRefundsItAfter(DialectCase dialect) throws Exception {
		try (SimulatedProvider provider = SimulatedProvider.start(dialect,
				(sim) -> sim.model(SimulatedProvider.MODEL, (limits) -> limits.requestsPerMinute(600))
					.latency((latency) -> latency.timeToFirstToken(Duration.ofMillis(400)).fixedOutputTokens(20)),
				"llm.quota.headroom=1.0", "reserve-max-tokens=true", "burst-window=60s",
				"models.test-model.output-tokens-per-minute=6000")) {
			CompletableFuture<String> answer = CompletableFuture.supplyAsync(() -> send(provider, 4_000, false, "Hi."));
			await().atMost(PATIENCE).until(() -> provider.inFlight() == 1);
			assertThat(outputRemaining(provider)).isLessThan(2_500);
			assertThat(answer.get()).isNotEmpty();
			await().atMost(PATIENCE).until(() -> provider.inFlight() == 0);
			assertThat(outputRemaining(provider)).isGreaterThan(5_500);
			assertThat(provider.pool().serverLimits().isEmpty()).as("rate-limit headers read")
				.isEqualTo(!dialect.reportsHeaders());
		}
	}

	/**
	 * Spring reads a body's first byte to tell whether it is empty, with mark and reset
	 * where the stream supports them (a BufferingClientHttpRequestFactory's, as logging
	 * set-ups use): the answer is followed from its first byte once, its usage read and
	 * its reservation refunded.
	 */
	@Test
	void theAnswersUsageIsReadWhenItsBodySupportsMarkAndResetOrItsCallerSkips() {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OPENAI,
				(sim) -> sim.model(SimulatedProvider.MODEL, (limits) -> limits.requestsPerMinute(600))
					.latency((latency) -> latency.fixedOutputTokens(20)),
				"llm.quota.headroom=1.0", "reserve-max-tokens=true", "burst-window=60s",
				"models.test-model.output-tokens-per-minute=6000")) {
			String answer = provider.app.context()
				.getBean(RestClient.Builder.class)
				.requestFactory(new BufferingClientHttpRequestFactory(new JdkClientHttpRequestFactory()))
				.build()
				.post()
				.uri(provider.simulator.baseUrl() + provider.dialect.path(SimulatedProvider.MODEL, false))
				.contentType(MediaType.APPLICATION_JSON)
				.body(provider.dialect.body(SimulatedProvider.MODEL, 4_000, false, "Hi."))
				.retrieve()
				.body(String.class);
			assertThat(answer).isNotEmpty();
			await().atMost(PATIENCE).until(() -> provider.inFlight() == 0);
			assertThat(outputRemaining(provider)).as("output left once the usage is read").isGreaterThan(5_500);
			// a caller that skips bytes of the body: they reach the call all the same
			String rest = provider.app.restClient()
				.post()
				.uri(provider.simulator.baseUrl() + provider.dialect.path(SimulatedProvider.MODEL, false))
				.contentType(MediaType.APPLICATION_JSON)
				.body(provider.dialect.body(SimulatedProvider.MODEL, 4_000, false, "Hi."))
				.exchange((request, response) -> {
					InputStream body = response.getBody();
					assertThat(body.skip(1)).isEqualTo(1);
					return new String(body.readAllBytes(), StandardCharsets.UTF_8);
				});
			assertThat(rest).isNotEmpty();
			await().atMost(PATIENCE).until(() -> provider.inFlight() == 0);
			assertThat(outputRemaining(provider)).as("output left once a skipping caller's usage is read")
				.isGreaterThan(5_500);
		}
	}

	@Test
	void aRateLimitIsWaitedOutAndRetried() {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.GEMINI,
				(sim) -> sim.window(Duration.ofSeconds(1))
					.model(SimulatedProvider.MODEL, (limits) -> limits.requestsPerMinute(60)),
				"llm.quota.max-wait=10s")) {
			assertThat(send(provider, 10, false, "One.")).isNotEmpty();
			assertThat(send(provider, 10, false, "Two.")).isNotEmpty();
			await().atMost(PATIENCE).until(() -> provider.simulator.requestLog().size() == 3);
			List<RequestRecord> log = provider.simulator.requestLog().records();
			assertThat(log).extracting(RequestRecord::outcome)
				.containsExactly(RequestRecord.Outcome.COMPLETED, RequestRecord.Outcome.REFUSED,
						RequestRecord.Outcome.COMPLETED);
			assertThat(Duration.between(log.get(1).arrival(), log.get(2).arrival()))
				.isGreaterThanOrEqualTo(provider.pool().stats().lastRateLimit().delay());
		}
	}

	/**
	 * Whichever request factory Spring Boot picks, the provider sees each of llm-quota's
	 * attempts once: Apache HttpClient's own retry of a 429 is off for governed calls,
	 * and only for them.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "http-components", "jdk", "jetty", "reactor", "simple" })
	void aProviderRefusingEveryCallSeesExactlyLlmQuotasAttemptsOnEveryRequestFactory(String factory) {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OPENAI,
				(sim) -> sim.faultRate(Fault.RATE_LIMITED, 1.0), "llm.quota.retry.max-attempts=3",
				"spring.http.clients.imperative.factory=" + factory);
				ProviderSimulator ungoverned = ProviderSimulator.builder().faultRate(Fault.RATE_LIMITED, 1.0).start()) {
			provider.simulator.faults().rateLimitWait(Duration.ofMillis(20));
			ungoverned.faults().rateLimitWait(Duration.ofMillis(20));
			assertThatException().isThrownBy(() -> send(provider, 10, false, "One."))
				.isInstanceOf(RateLimitedException.class);
			assertThat(provider.simulator.requestLog().records()).as("requests of one governed call").hasSize(3);
			// a call llm-quota does not govern keeps the client's own behaviour
			RestClient client = provider.app.restClient();
			assertThatException().isThrownBy(() -> client.post()
				.uri(ungoverned.baseUrl() + DialectCase.OPENAI.path(SimulatedProvider.MODEL, false))
				.contentType(MediaType.APPLICATION_JSON)
				.body(DialectCase.OPENAI.body(SimulatedProvider.MODEL, 10, false, "Two."))
				.retrieve()
				.body(String.class));
			int ungovernedRequests = factory.equals("http-components") ? 2 : 1;
			assertThat(ungoverned.requestLog().records()).as("requests of one ungoverned call")
				.hasSize(ungovernedRequests);
			// a call governed by the entry it names, whatever its URL (a gateway): its
			// attempts are llm-quota's, each sent once
			assertThatException()
				.isThrownBy(() -> client.post()
					.uri(ungoverned.baseUrl() + DialectCase.OPENAI.path(SimulatedProvider.MODEL, false))
					.attribute(dev.llmquota.LlmQuota.PROVIDER, SimulatedProvider.PROVIDER)
					.contentType(MediaType.APPLICATION_JSON)
					.body(DialectCase.OPENAI.body(SimulatedProvider.MODEL, 10, false, "Three."))
					.retrieve()
					.body(String.class))
				.isInstanceOf(RateLimitedException.class);
			assertThat(ungoverned.requestLog().records()).as("requests of a call governed by its PROVIDER attribute")
				.hasSize(ungovernedRequests + 3);
		}
	}

	@Test
	void aSpentQuotaReachesTheProviderOnce() {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OPENAI, (sim) -> sim.exhausted(true))) {
			assertThatException().isThrownBy(() -> send(provider, 10, false, "One."))
				.isInstanceOf(QuotaExhaustedException.class);
			assertThatException().isThrownBy(() -> send(provider, 10, false, "Two."))
				.isInstanceOf(QuotaExhaustedException.class);
			await().atMost(PATIENCE).until(() -> provider.simulator.requestLog().size() == 1);
		}
	}

	@Test
	void aStreamHoldsItsSlotUntilClosedAndClosingEarlyReleasesIt() {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OPENAI,
				(sim) -> sim.latency((latency) -> latency.perOutputToken(Duration.ofMillis(20)).fixedOutputTokens(50)),
				"llm.quota.headroom=1.0", "models.test-model.concurrent-requests=1")) {
			RestClient client = provider.app.restClient();
			String first = client.post()
				.uri(provider.simulator.baseUrl() + provider.dialect.path(SimulatedProvider.MODEL, true))
				.contentType(MediaType.APPLICATION_JSON)
				.body(provider.dialect.body(SimulatedProvider.MODEL, 100, true, "Tell a story."))
				.exchange((request, response) -> {
					try (BufferedReader reader = new BufferedReader(
							new InputStreamReader(response.getBody(), StandardCharsets.UTF_8))) {
						String line = reader.readLine();
						assertThat(provider.inFlight()).as("the slot is held while the stream is read").isEqualTo(1);
						return line;
					}
				});
			assertThat(first).startsWith("data:");
			await().atMost(PATIENCE).until(() -> provider.inFlight() == 0);
			assertThat(send(provider, 10, true, "Short.")).contains("data:");
		}
	}

	@Test
	void aBodyThatIsNotJsonPassesThroughUnchanged() {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OPENAI, (sim) -> {
		})) {
			String answer = provider.app.restClient()
				.post()
				.uri(provider.simulator.baseUrl() + "/v1/chat/completions")
				.contentType(MediaType.APPLICATION_JSON)
				.body("this is { not json")
				.exchange((request, response) -> response.getStatusCode().value() + " "
						+ new String(response.getBody().readAllBytes(), StandardCharsets.UTF_8));
			assertThat(answer).startsWith("400 ").contains("error");
			assertThat(provider.inFlight()).isZero();
		}
	}

	@Test
	void theInterceptorIsAddedOnceToEveryBuilder() {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OPENAI, (sim) -> {
		})) {
			RestClient.Builder builder = provider.app.context().getBean(RestClient.Builder.class);
			builder.requestInterceptors((interceptors) -> assertThat(interceptors)
				.filteredOn((interceptor) -> interceptor.getClass().getSimpleName().startsWith("LlmQuota"))
				.hasSize(1));
			assertThat(send(provider, 10, false, "Hello.")).isNotEmpty();
			assertThat(provider.pool().drift().samples()).isEqualTo(1);
		}
	}

	/**
	 * A blocking call whose thread is interrupted as it is admitted: the permit is
	 * granted while the wait gives up, and either end may come first. The call never
	 * starts, so its slot and booking go back, not after the ten-minute lease.
	 */
	@Test
	void aCallInterruptedAsItIsAdmittedGivesItsSlotBack() throws Exception {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OPENAI, (sim) -> {
		}, "llm.quota.headroom=1.0", "models.test-model.concurrent-requests=1", "llm.quota.max-wait=30s")) {
			QuotaEngine engine = provider.app.engine();
			AtomicReference<Thread> caller = new AtomicReference<>();
			engine.addListener(new QuotaEvents() {

				@Override
				public void admitted(Pool pool, Priority priority, long waitedNanos) {
					Thread waiting = caller.get();
					if (waiting != null) {
						// told before the permit is handed over
						waiting.interrupt();
					}
				}

			});
			for (int i = 0; i < 100; i++) {
				QuotaPermit held = engine.acquire(provider.pool(), new Demand(1, 1), null, PATIENCE).block(PATIENCE);
				Thread waiting = new Thread(() -> {
					try {
						send(provider, 10, false, "Hello.");
					}
					catch (RuntimeException ex) {
						// interrupted, as the test means
					}
				});
				waiting.start();
				await().atMost(PATIENCE).pollInterval(Duration.ofMillis(1)).until(() -> provider.waiting() == 1);
				caller.set(waiting);
				held.release();
				caller.set(null);
				waiting.join(PATIENCE.toMillis());
				assertThat(waiting.isAlive()).isFalse();
				assertThat(provider.inFlight()).as("after call %d", i).isZero();
			}
		}
	}

	private static long outputRemaining(SimulatedProvider provider) {
		return provider.snapshot().bucket(BucketSpec.Scope.POOL, Dimension.OUTPUT_TOKENS_PER_MINUTE).remaining();
	}

}
