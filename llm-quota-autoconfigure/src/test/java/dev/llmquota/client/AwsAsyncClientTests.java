package dev.llmquota.client;

import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.llmquota.LlmQuota;
import dev.llmquota.client.aws.LlmQuotaAwsHttpClients;
import dev.llmquota.core.Priority;
import dev.llmquota.test.simulator.Fault;
import dev.llmquota.test.simulator.RequestRecord;
import io.github.resilience4j.retry.Retry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.SdkHttpResponse;
import software.amazon.awssdk.http.async.AsyncExecuteRequest;
import software.amazon.awssdk.http.async.SdkAsyncHttpClient;
import software.amazon.awssdk.http.async.SdkAsyncHttpResponseHandler;
import software.amazon.awssdk.http.async.SdkHttpContentPublisher;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

/**
 * The AWS SDK's asynchronous HTTP client, governed: its attempts under the entry's one
 * retry, its full-duplex sessions sent as they come, and its failures (the SPI lets a
 * client report an attempt's failure through the future it returned alone, after the
 * answer's headers were handed on) ending the governed call, its slot back.
 */
class AwsAsyncClientTests {

	private static final Duration PATIENCE = Duration.ofSeconds(15);

	@Test
	void anAttemptThatFailsThroughItsFutureOnlyAfterItsHeadersGivesItsSlotBack() {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.BEDROCK, (sim) -> {
		}, "llm.quota.headroom=1.0", "models.test-model.concurrent-requests=1")) {
			SdkAsyncHttpClient governed = provider.app.context()
				.getBean(LlmQuotaAwsHttpClients.class)
				.govern(new HeadersThenDrop(Drops.EVERY_ANSWER));
			CompletableFuture<Void> result = governed.execute(request(provider, new Ignoring()));
			assertThatException().isThrownBy(() -> result.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
				.withCauseInstanceOf(IOException.class);
			await().atMost(PATIENCE).until(() -> provider.pool().stats().inFlightCalls() == 0);
		}
	}

	/**
	 * A 429 whose body fails to read: decided by its status and headers, as on every
	 * stack, so the call is retried after the provider's wait and then answered.
	 */
	@ParameterizedTest
	@ValueSource(booleans = { false, true })
	void aRefusalWhoseBodyFailsIsDecidedByItsStatusAndHeaders(boolean toldThroughOnError) throws Exception {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.BEDROCK, (sim) -> {
		}, "llm.quota.headroom=1.0", "llm.quota.retry.initial-backoff=10ms")) {
			provider.simulator.faults().rateLimitWait(Duration.ofMillis(200)).next(Fault.RATE_LIMITED);
			SdkAsyncHttpClient governed = provider.app.context()
				.getBean(LlmQuotaAwsHttpClients.class)
				.govern(new HeadersThenDrop(
						toldThroughOnError ? Drops.REFUSAL_BODY_ON_ERROR : Drops.REFUSAL_BODY_IN_STREAM));
			List<Integer> statuses = new CopyOnWriteArrayList<>();
			governed.execute(request(provider, new Ignoring() {

				@Override
				public void onHeaders(SdkHttpResponse headers) {
					statuses.add(headers.statusCode());
				}

				@Override
				public void onStream(Publisher<ByteBuffer> stream) {
					Flux.from(stream).subscribe();
				}

			})).get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
			assertThat(provider.simulator.requestLog().records()).extracting(RequestRecord::status)
				.containsExactly(429, 200);
			assertThat(statuses).as("what the SDK saw").containsExactly(200);
			await().atMost(PATIENCE).until(() -> provider.pool().stats().inFlightCalls() == 0);
		}
	}

	/**
	 * The SDK gives up on a call in flight (its attempt timeout) by failing the future
	 * the governed client returned, as it fails an HTTP client's own: the attempt below
	 * is ended too (a real client aborts its request), and the call gives its slot back.
	 */
	@Test
	void theSdkGivingUpOnACallInFlightEndsItsAttempt() {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.BEDROCK, (sim) -> {
		}, "llm.quota.headroom=1.0", "models.test-model.concurrent-requests=1")) {
			AtomicReference<CompletableFuture<Void>> attempt = new AtomicReference<>();
			SdkAsyncHttpClient hanging = new SdkAsyncHttpClient() {

				@Override
				public CompletableFuture<Void> execute(AsyncExecuteRequest request) {
					// sent, and no answer yet
					attempt.set(new CompletableFuture<>());
					return attempt.get();
				}

				@Override
				public void close() {
				}

			};
			CompletableFuture<Void> result = provider.app.context()
				.getBean(LlmQuotaAwsHttpClients.class)
				.govern(hanging)
				.execute(request(provider, new Ignoring()));
			await().atMost(PATIENCE).until(() -> provider.inFlight() == 1);
			result.completeExceptionally(new IOException("API call attempt timed out"));
			assertThat(attempt.get()).as("the HTTP client's attempt once the SDK gave up").isDone();
			await().atMost(PATIENCE).until(() -> provider.pool().stats().inFlightCalls() == 0);
		}
	}

	/**
	 * A throttled call answered on its second attempt counts in the entry's Resilience4j
	 * retry, as on every other stack: its metrics and events are the policy's.
	 */
	@Test
	void itsRetriesRunUnderTheEntrysRetryAsOnEveryOtherStack() throws Exception {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.BEDROCK, (sim) -> {
		}, "llm.quota.headroom=1.0", "llm.quota.retry.initial-backoff=10ms")) {
			provider.simulator.faults().rateLimitWait(Duration.ofMillis(200)).next(Fault.RATE_LIMITED);
			SdkAsyncHttpClient governed = provider.app.context()
				.getBean(LlmQuotaAwsHttpClients.class)
				.govern(new HeadersThenDrop(Drops.NOTHING));
			governed.execute(request(provider, new Ignoring())).get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
			assertThat(provider.simulator.requestLog().records()).extracting(RequestRecord::status)
				.containsExactly(429, 200);
			Retry.Metrics metrics = provider.app.context()
				.getBean(LlmQuotaCalls.class)
				.retryPolicy()
				.of(SimulatedProvider.PROVIDER)
				.getMetrics();
			assertThat(List.of(metrics.getNumberOfSuccessfulCallsWithRetryAttempt(),
					metrics.getNumberOfSuccessfulCallsWithoutRetryAttempt(),
					metrics.getNumberOfFailedCallsWithRetryAttempt(),
					metrics.getNumberOfFailedCallsWithoutRetryAttempt()))
				.as("calls succeeded with a retry, without, failed with, failed without")
				.containsExactly(1L, 0L, 0L, 0L);
		}
	}

	/**
	 * The SDK runs an asynchronous client's later attempts (its retry strategy's) on a
	 * thread of its own, where no {@link LlmQuota#with} scope reaches: what the governed
	 * client is bound to carries them, and a scope around a call still wins.
	 */
	@Test
	void aCallMadeOnAThreadOfTheSdksCarriesWhatItsClientBinds() throws Exception {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.BEDROCK, (sim) -> {
		}, "llm.quota.headroom=1.0")) {
			SdkAsyncHttpClient governed = provider.app.context()
				.getBean(LlmQuotaAwsHttpClients.class)
				.with(LlmQuota.PRIORITY, Priority.BATCH)
				.govern(new HeadersThenDrop(Drops.NOTHING));
			CompletableFuture.supplyAsync(() -> governed.execute(request(provider, new Ignoring())))
				.thenCompose((attempt) -> attempt)
				.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
			LlmQuota.with(LlmQuota.PRIORITY, Priority.INTERACTIVE)
				.get(() -> governed.execute(request(provider, new Ignoring())))
				.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
			assertThat(List.of(provider.pool().stats().waits(Priority.BATCH).admitted(),
					provider.pool().stats().waits(Priority.INTERACTIVE).admitted()))
				.as("calls admitted as BATCH, as INTERACTIVE")
				.containsExactly(1L, 1L);
		}
	}

	/**
	 * A bidirectional stream (Nova Sonic's InvokeModelWithBidirectionalStream) sends its
	 * input while the model answers: its request goes on as it comes, never held until a
	 * body that ends with the session.
	 */
	@Test
	void aFullDuplexSessionIsSentAsItComesNotHeldForItsWholeBody() {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.BEDROCK, (sim) -> {
		})) {
			AtomicReference<AsyncExecuteRequest> sent = new AtomicReference<>();
			SdkAsyncHttpClient session = new SdkAsyncHttpClient() {

				@Override
				public CompletableFuture<Void> execute(AsyncExecuteRequest request) {
					sent.set(request);
					return new CompletableFuture<>();
				}

				@Override
				public void close() {
				}

			};
			// the session's input: its first event now, more once the model answers
			Sinks.Many<ByteBuffer> input = Sinks.many().unicast().onBackpressureBuffer();
			input.tryEmitNext(ByteBuffer.wrap("{\"event\":{\"sessionStart\":{}}}".getBytes(StandardCharsets.UTF_8)));
			provider.app.context()
				.getBean(LlmQuotaAwsHttpClients.class)
				.govern(session)
				.execute(AsyncExecuteRequest.builder()
					.request(SdkHttpRequest.builder()
						.method(SdkHttpMethod.POST)
						.uri(URI.create(provider.simulator.baseUrl() + "/model/" + SimulatedProvider.MODEL
								+ "/invoke-with-bidirectional-stream"))
						.putHeader("Content-Type", "application/vnd.amazon.eventstream")
						.build())
					.requestContentPublisher(new SdkHttpContentPublisher() {

						@Override
						public Optional<Long> contentLength() {
							return Optional.empty();
						}

						@Override
						public void subscribe(Subscriber<? super ByteBuffer> subscriber) {
							input.asFlux().subscribe(subscriber);
						}

					})
					.fullDuplex(true)
					.responseHandler(new Ignoring())
					.build());
			await("the session reaches the HTTP client while its input still flows").atMost(PATIENCE)
				.until(() -> sent.get() != null);
		}
	}

	private static AsyncExecuteRequest request(SimulatedProvider provider, SdkAsyncHttpResponseHandler handler) {
		byte[] json = JsonMapper.shared()
			.writeValueAsBytes(provider.dialect.body(SimulatedProvider.MODEL, 10, false, "Hi."));
		return AsyncExecuteRequest.builder()
			.request(SdkHttpRequest.builder()
				.method(SdkHttpMethod.POST)
				.uri(URI.create(provider.simulator.baseUrl() + provider.dialect.path(SimulatedProvider.MODEL, false)))
				.putHeader("Content-Type", "application/json")
				.build())
			.requestContentPublisher(new SdkHttpContentPublisher() {

				@Override
				public Optional<Long> contentLength() {
					return Optional.of((long) json.length);
				}

				@Override
				public void subscribe(Subscriber<? super ByteBuffer> subscriber) {
					Flux.just(ByteBuffer.wrap(json)).subscribe(subscriber);
				}

			})
			.responseHandler(handler)
			.build();
	}

	/** The SDK's handler, reading nothing. */
	private static class Ignoring implements SdkAsyncHttpResponseHandler {

		@Override
		public void onHeaders(SdkHttpResponse headers) {
		}

		@Override
		public void onStream(Publisher<ByteBuffer> stream) {
		}

		@Override
		public void onError(Throwable error) {
		}

	}

	/**
	 * A client over the JDK's that calls the simulator and hands the answer's headers on;
	 * then either reports a dropped connection through its future only, or, with
	 * {@code refusalsOnly}, breaks the body of a refusal and hands a success on whole.
	 */
	/** What a {@link HeadersThenDrop} client breaks. */
	private enum Drops {

		/** nothing: every answer is handed on whole */
		NOTHING,

		/** every answer, after its headers, told through its future only */
		EVERY_ANSWER,

		/** a refusal's body, told through the handler's {@code onError} */
		REFUSAL_BODY_ON_ERROR,

		/** a refusal's body, told through the body's publisher */
		REFUSAL_BODY_IN_STREAM

	}

	/**
	 * A client over the JDK's that calls the simulator, hands the answer's headers on,
	 * then breaks what it is told to.
	 */
	private static final class HeadersThenDrop implements SdkAsyncHttpClient {

		private final java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();

		private final Drops drops;

		HeadersThenDrop(Drops drops) {
			this.drops = drops;
		}

		@Override
		public CompletableFuture<Void> execute(AsyncExecuteRequest request) {
			byte[] body = Flux.from(request.requestContentPublisher()).map((buffer) -> {
				byte[] bytes = new byte[buffer.remaining()];
				buffer.duplicate().get(bytes);
				return bytes;
			}).reduce(new byte[0], (all, more) -> {
				byte[] joined = java.util.Arrays.copyOf(all, all.length + more.length);
				System.arraycopy(more, 0, joined, all.length, more.length);
				return joined;
			}).toFuture().join(); // the request's publisher is llm-quota's bytes: at once
			java.net.http.HttpRequest.Builder sent = java.net.http.HttpRequest.newBuilder(request.request().getUri())
				.POST(java.net.http.HttpRequest.BodyPublishers.ofByteArray(body));
			request.request().forEachHeader((name, values) -> {
				if (!name.equalsIgnoreCase("Content-Length") && !name.equalsIgnoreCase("Host")) {
					values.forEach((value) -> sent.header(name, value));
				}
			});
			return this.http.sendAsync(sent.build(), java.net.http.HttpResponse.BodyHandlers.ofByteArray())
				.thenCompose((response) -> {
					request.responseHandler()
						.onHeaders(SdkHttpResponse.builder()
							.statusCode(response.statusCode())
							.headers(response.headers().map())
							.build());
					if (this.drops == Drops.EVERY_ANSWER) {
						return CompletableFuture.failedFuture(new IOException("Connection reset"));
					}
					if (response.statusCode() >= 400 && this.drops != Drops.NOTHING) {
						if (this.drops == Drops.REFUSAL_BODY_ON_ERROR) {
							request.responseHandler().onError(new IOException("Connection reset"));
						}
						else {
							request.responseHandler().onStream(Flux.error(new IOException("Connection reset")));
						}
						return CompletableFuture.failedFuture(new IOException("Connection reset"));
					}
					request.responseHandler().onStream(Flux.just(ByteBuffer.wrap(response.body())));
					return CompletableFuture.completedFuture(null);
				});
		}

		@Override
		public String clientName() {
			return "headers-then-drop";
		}

		@Override
		public void close() {
		}

	}

}
