package dev.llmquota.client;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.anthropic.backends.AnthropicBackend;
import com.anthropic.core.RequestOptions;
import com.anthropic.core.http.HttpClient;
import com.anthropic.core.http.HttpMethod;
import com.anthropic.core.http.HttpRequest;
import com.anthropic.core.http.HttpRequestBody;
import com.anthropic.core.http.HttpResponse;
import dev.llmquota.LlmQuota;
import dev.llmquota.client.anthropic.LlmQuotaAnthropicInterceptor;
import dev.llmquota.core.Demand;
import dev.llmquota.core.Priority;
import dev.llmquota.core.QuotaPermit;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.ai.anthropic.http.okhttp.SpringAiAnthropicHttpClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Asynchronous calls of Anthropic's SDK client under llm-quota's interceptor (its async
 * client, Spring AI's streaming): the scope they were made in steers them, and one their
 * caller cancels while it waits is not sent, and one cancelled in flight gives its slot
 * back once its answer comes, though nobody reads it.
 */
class AnthropicSdkAsyncTests {

	private static final Duration PATIENCE = Duration.ofSeconds(15);

	/**
	 * The call waits for admission on another thread: the scope its caller's thread set
	 * goes with it.
	 */
	@Test
	void aBatchScopeAroundAnAsynchronousCallAdmitsItAsBatch() throws Exception {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.ANTHROPIC, (sim) -> {
		})) {
			HttpClient client = governed(provider);
			CompletableFuture<HttpResponse> answer = LlmQuota.with(LlmQuota.PRIORITY, Priority.BATCH)
				.get(() -> client.executeAsync(request(provider), RequestOptions.none()));
			try (HttpResponse response = answer.get(PATIENCE.toSeconds(), TimeUnit.SECONDS)) {
				assertThat(response.statusCode()).isEqualTo(200);
			}
			assertThat(provider.pool().stats().waits(Priority.BATCH).admitted()).isEqualTo(1);
			assertThat(provider.pool().stats().waits(Priority.INTERACTIVE).admitted()).isZero();
		}
	}

	@Test
	void aCallCancelledWhileWaitingForAdmissionIsNotSentAndGivesItsSlotBack() throws Exception {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.ANTHROPIC, (sim) -> {
		}, "llm.quota.headroom=1.0", "llm.quota.max-wait=30s", "models.test-model.concurrent-requests=1")) {
			HttpClient client = governed(provider);
			QuotaPermit held = provider.app.engine()
				.acquire(provider.pool(), new Demand(1, 1), null, PATIENCE)
				.block(PATIENCE);
			CompletableFuture<HttpResponse> answer = client.executeAsync(request(provider), RequestOptions.none());
			await().atMost(PATIENCE).until(() -> provider.waiting() == 1);
			answer.cancel(true);
			// it leaves the line at once, holding back no call behind it
			await().atMost(PATIENCE).until(() -> provider.waiting() == 0);
			held.release();
			await().atMost(PATIENCE).until(() -> provider.pool().stats().inFlightCalls() == 0);
			assertThat(provider.simulator.requestLog().records()).as("requests of the cancelled call").isEmpty();
		}
	}

	@Test
	void aCallCancelledInFlightGivesItsSlotBackWhenItsAnswerComes() {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.ANTHROPIC,
				(sim) -> sim.latency((latency) -> latency.timeToFirstToken(Duration.ofMillis(500))),
				"llm.quota.headroom=1.0", "models.test-model.concurrent-requests=1")) {
			CompletableFuture<HttpResponse> answer = governed(provider).executeAsync(request(provider),
					RequestOptions.none());
			await().atMost(PATIENCE).until(() -> provider.inFlight() == 1);
			answer.cancel(true);
			await().atMost(PATIENCE).until(() -> provider.simulator.requestLog().size() == 1);
			await().atMost(PATIENCE).until(() -> provider.pool().stats().inFlightCalls() == 0);
		}
	}

	/** The SDK's HTTP client, as Spring AI builds it, under llm-quota's interceptor. */
	private static HttpClient governed(SimulatedProvider provider) {
		HttpClient sdk = SpringAiAnthropicHttpClient.builder()
			.backend(AnthropicBackend.builder().apiKey("test-key").baseUrl(provider.simulator.baseUrl()).build())
			.build();
		return provider.app.context().getBean(LlmQuotaAnthropicInterceptor.class).intercept(sdk);
	}

	private static HttpRequest request(SimulatedProvider provider) {
		byte[] json = JsonMapper.shared()
			.writeValueAsBytes(provider.dialect.body(SimulatedProvider.MODEL, 10, false, "Hi."));
		return HttpRequest.builder()
			.method(HttpMethod.POST)
			.baseUrl(provider.simulator.baseUrl())
			.addPathSegments("v1", "messages")
			.putHeader("x-api-key", "test-key")
			.putHeader("anthropic-version", "2023-06-01")
			.body(new HttpRequestBody() {

				@Override
				public void writeTo(OutputStream out) {
					try {
						out.write(json);
					}
					catch (IOException ex) {
						throw new UncheckedIOException(ex);
					}
				}

				@Override
				public String contentType() {
					return "application/json";
				}

				@Override
				public long contentLength() {
					return json.length;
				}

				@Override
				public boolean repeatable() {
					return true;
				}

				@Override
				public void close() {
				}

			})
			.build();
	}

}
