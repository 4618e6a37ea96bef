package dev.llmquota.client;

import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.llmquota.client.aws.LlmQuotaAwsHttpClients;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import reactor.core.publisher.Flux;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.SdkHttpResponse;
import software.amazon.awssdk.http.async.AsyncExecuteRequest;
import software.amazon.awssdk.http.async.SdkAsyncHttpClient;
import software.amazon.awssdk.http.async.SdkAsyncHttpResponseHandler;
import software.amazon.awssdk.http.async.SdkHttpContentPublisher;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

/**
 * The AWS SDK's asynchronous HTTP client SPI lets a client report an attempt's failure
 * through the future it returned alone, after the answer's headers were handed on: the
 * governed call ends then too, its slot back.
 */
class AwsAsyncFailureTests {

	private static final Duration PATIENCE = Duration.ofSeconds(15);

	@Test
	void anAttemptThatFailsThroughItsFutureOnlyAfterItsHeadersGivesItsSlotBack() {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.BEDROCK, (sim) -> {
		}, "llm.quota.headroom=1.0", "models.test-model.concurrent-requests=1")) {
			SdkAsyncHttpClient governed = provider.app.context()
				.getBean(LlmQuotaAwsHttpClients.class)
				.govern(new HeadersThenDrop());
			byte[] json = JsonMapper.shared()
				.writeValueAsBytes(provider.dialect.body(SimulatedProvider.MODEL, 10, false, "Hi."));
			CompletableFuture<Void> result = governed.execute(AsyncExecuteRequest.builder()
				.request(SdkHttpRequest.builder()
					.method(SdkHttpMethod.POST)
					.uri(URI
						.create(provider.simulator.baseUrl() + provider.dialect.path(SimulatedProvider.MODEL, false)))
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
				.responseHandler(new SdkAsyncHttpResponseHandler() {

					@Override
					public void onHeaders(SdkHttpResponse headers) {
					}

					@Override
					public void onStream(Publisher<ByteBuffer> stream) {
					}

					@Override
					public void onError(Throwable error) {
					}

				})
				.build());
			assertThatException().isThrownBy(() -> result.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
				.withCauseInstanceOf(IOException.class);
			await().atMost(PATIENCE).until(() -> provider.pool().stats().inFlightCalls() == 0);
		}
	}

	/**
	 * A client over the JDK's that calls the simulator, hands the answer's headers on,
	 * then reports a dropped connection through its future only.
	 */
	private static final class HeadersThenDrop implements SdkAsyncHttpClient {

		private final java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();

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
			}).block(PATIENCE);
			java.net.http.HttpRequest.Builder sent = java.net.http.HttpRequest.newBuilder(request.request().getUri())
				.POST(java.net.http.HttpRequest.BodyPublishers.ofByteArray(body));
			request.request().forEachHeader((name, values) -> {
				if (!name.equalsIgnoreCase("Content-Length") && !name.equalsIgnoreCase("Host")) {
					values.forEach((value) -> sent.header(name, value));
				}
			});
			return this.http.sendAsync(sent.build(), java.net.http.HttpResponse.BodyHandlers.discarding())
				.thenCompose((response) -> {
					request.responseHandler()
						.onHeaders(SdkHttpResponse.builder()
							.statusCode(response.statusCode())
							.headers(response.headers().map())
							.build());
					return CompletableFuture.failedFuture(new IOException("Connection reset"));
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
