package dev.llmquota.client;

import java.io.InputStream;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;

import dev.llmquota.QuotaExhaustedException;
import dev.llmquota.RateLimitedException;
import dev.llmquota.test.simulator.Fault;
import dev.llmquota.test.simulator.RequestRecord;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.web.client.RestTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

/**
 * A {@code RestTemplate} from Spring Boot's {@code RestTemplateBuilder}, with nothing
 * written for llm-quota: its calls are admitted, retried and accounted as
 * {@code RestClient}'s are.
 */
class RestTemplateGovernanceTests {

	private static final Duration PATIENCE = Duration.ofSeconds(15);

	private static String send(SimulatedProvider provider, RestTemplate template, String prompt) {
		HttpHeaders headers = new HttpHeaders();
		headers.setContentType(MediaType.APPLICATION_JSON);
		return template.postForObject(
				provider.simulator.baseUrl() + provider.dialect.path(SimulatedProvider.MODEL, false),
				new HttpEntity<>(provider.dialect.body(SimulatedProvider.MODEL, 20, false, prompt), headers),
				String.class);
	}

	@Test
	void fourCallsAtOnceOnOneSlotGoOneAfterAnotherWithNoRefusal() {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OPENAI,
				(sim) -> sim.model(SimulatedProvider.MODEL, (limits) -> limits.concurrentRequests(1))
					.latency((latency) -> latency.timeToFirstToken(Duration.ofMillis(100)).fixedOutputTokens(10)),
				"llm.quota.headroom=1.0", "models.test-model.concurrent-requests=1")) {
			RestTemplate template = provider.app.restTemplate();
			List<CompletableFuture<String>> calls = IntStream.range(0, 4)
				.mapToObj((i) -> CompletableFuture.supplyAsync(() -> send(provider, template, "Call " + i + ".")))
				.toList();
			assertThat(calls).allSatisfy((call) -> assertThat(call.get(20, java.util.concurrent.TimeUnit.SECONDS))
				.contains("chat.completion"));
			// the simulator logs a completed call as its last byte goes out: the caller
			// may be first
			await().atMost(PATIENCE).until(() -> provider.simulator.requestLog().size() == 4);
			assertThat(provider.simulator.requestLog().records()).hasSize(4)
				.allSatisfy((record) -> assertThat(record.outcome()).isEqualTo(RequestRecord.Outcome.COMPLETED));
			await().atMost(PATIENCE).until(() -> provider.inFlight() == 0);
			assertThat(provider.pool().stats().billedOutput()).as("each call's usage in the books").isEqualTo(40);
		}
	}

	@Test
	void aStreamHoldsItsSlotToItsLastByteAndIsChargedItsUsage() throws Exception {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OPENAI,
				(sim) -> sim.latency((latency) -> latency.perOutputToken(Duration.ofMillis(10)).fixedOutputTokens(30)),
				"llm.quota.headroom=1.0", "models.test-model.concurrent-requests=1")) {
			RestTemplate template = provider.app.restTemplate();
			byte[] body = JsonMapper.shared()
				.writeValueAsBytes(provider.dialect.body(SimulatedProvider.MODEL, 100, true, "Tell a story."));
			String streamed = template.execute(
					provider.simulator.baseUrl() + provider.dialect.path(SimulatedProvider.MODEL, true),
					HttpMethod.POST, (request) -> {
						request.getHeaders().setContentType(MediaType.APPLICATION_JSON);
						request.getBody().write(body);
					}, (response) -> {
						try (InputStream in = response.getBody()) {
							byte[] first = in.readNBytes(16);
							assertThat(provider.inFlight()).as("the slot, while the stream is read").isOne();
							return new String(first) + new String(in.readAllBytes());
						}
					});
			assertThat(streamed).contains("[DONE]");
			await().atMost(PATIENCE).until(() -> provider.inFlight() == 0);
			assertThat(provider.pool().stats().billedOutput()).isEqualTo(30);
		}
	}

	@Test
	void aProviderRefusingEveryCallSeesExactlyLlmQuotasAttempts() {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OPENAI,
				(sim) -> sim.faultRate(Fault.RATE_LIMITED, 1.0), "llm.quota.retry.max-attempts=3")) {
			provider.simulator.faults().rateLimitWait(Duration.ofMillis(20));
			assertThatException().isThrownBy(() -> send(provider, provider.app.restTemplate(), "One."))
				.isInstanceOf(RateLimitedException.class);
			assertThat(provider.simulator.requestLog().records()).hasSize(3);
		}
	}

	@Test
	void aSpentQuotaReachesTheProviderOnce() {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OPENAI, (sim) -> sim.exhausted(true))) {
			RestTemplate template = provider.app.restTemplate();
			assertThatException().isThrownBy(() -> send(provider, template, "One."))
				.isInstanceOf(QuotaExhaustedException.class);
			assertThatException().isThrownBy(() -> send(provider, template, "Two."))
				.isInstanceOf(QuotaExhaustedException.class);
			assertThat(provider.simulator.requestLog().records()).hasSize(1);
		}
	}

}
