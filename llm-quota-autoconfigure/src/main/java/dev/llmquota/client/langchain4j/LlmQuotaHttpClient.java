package dev.llmquota.client.langchain4j;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpHeaders;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import dev.langchain4j.exception.HttpException;
import dev.langchain4j.exception.NonRetriableException;
import dev.langchain4j.exception.TimeoutException;
import dev.langchain4j.http.client.HttpClient;
import dev.langchain4j.http.client.HttpClientBuilderLoader;
import dev.langchain4j.http.client.HttpRequest;
import dev.langchain4j.http.client.SuccessfulHttpResponse;
import dev.langchain4j.http.client.sse.ServerSentEventListener;
import dev.langchain4j.http.client.sse.ServerSentEventParser;
import dev.llmquota.LlmQuota;
import dev.llmquota.LlmQuotaException;
import dev.llmquota.client.BlockingExchange;
import dev.llmquota.client.CallPlan;
import dev.llmquota.client.FollowingInputStream;
import dev.llmquota.client.GovernedCall;
import dev.llmquota.client.LlmQuotaCalls;
import dev.llmquota.client.ProviderEntry;
import dev.llmquota.client.StreamHead;
import dev.llmquota.provider.HeaderLookup;

/**
 * LangChain4j's HTTP client, governed, on the JDK's {@code HttpClient}: each call waits
 * for admission on the calling thread (a stream on a thread of its own, so the model's
 * streaming call returns at once), refusals are classified and retried or failed by
 * llm-quota, and the answer's body is read on its way, so a stream holds its slot to its
 * last byte and is charged its usage.
 * <p>
 * LangChain4j retries a blocking call that fails ({@code maxRetries}, 2 by default); so
 * that retries never multiply, what llm-quota gives up on reaches it as a
 * {@link NonRetriableException} whose cause is the contract exception, which it neither
 * retries nor maps to an HTTP error. Requests llm-quota does not govern go to
 * LangChain4j's own default client unchanged.
 */
final class LlmQuotaHttpClient implements HttpClient {

	/** Where streams wait for admission and are read, off the caller's thread. */
	private static final ExecutorService STREAMS = Executors.newCachedThreadPool((task) -> {
		Thread thread = new Thread(task, "llm-quota-langchain4j-stream");
		thread.setDaemon(true);
		return thread;
	});

	private final LlmQuotaCalls calls;

	private final java.net.http.HttpClient client;

	private final Duration readTimeout;

	private volatile HttpClient plain;

	LlmQuotaHttpClient(LlmQuotaCalls calls, java.net.http.HttpClient client, Duration readTimeout) {
		this.calls = calls;
		this.client = client;
		this.readTimeout = readTimeout;
	}

	@Override
	public SuccessfulHttpResponse execute(HttpRequest request) {
		Map<String, Object> scope = scope();
		ProviderEntry entry = entry(request, scope);
		if (entry == null) {
			return plain().execute(request);
		}
		Answer answer = exchange(entry, request, scope);
		try (InputStream body = answer.body()) {
			byte[] bytes = body.readAllBytes();
			if (answer.status() < 200 || answer.status() >= 300) {
				// an answer llm-quota passes on as the provider sent it
				throw new HttpException(answer.status(), new String(bytes, StandardCharsets.UTF_8));
			}
			return response(answer, bytes);
		}
		catch (IOException ex) {
			throw failure(ex);
		}
	}

	@Override
	public void execute(HttpRequest request, ServerSentEventParser parser, ServerSentEventListener listener) {
		Map<String, Object> scope = scope();
		ProviderEntry entry;
		try {
			entry = entry(request, scope);
		}
		catch (RuntimeException ex) {
			quietly(() -> listener.onError(ex));
			return;
		}
		if (entry == null) {
			plain().execute(request, parser, listener);
			return;
		}
		STREAMS.execute(() -> stream(entry, request, scope, parser, listener));
	}

	private void stream(ProviderEntry entry, HttpRequest request, Map<String, Object> scope,
			ServerSentEventParser parser, ServerSentEventListener listener) {
		Answer answer;
		try {
			answer = exchange(entry, request, scope);
		}
		catch (RuntimeException ex) {
			quietly(() -> listener.onError(ex));
			return;
		}
		try (InputStream body = answer.body()) {
			if (answer.status() < 200 || answer.status() >= 300) {
				HttpException refused = new HttpException(answer.status(),
						new String(body.readAllBytes(), StandardCharsets.UTF_8));
				quietly(() -> listener.onError(refused));
				return;
			}
			quietly(() -> listener.onOpen(response(answer, null)));
			parser.parse(body, listener);
			quietly(listener::onClose);
		}
		catch (IOException | RuntimeException ex) {
			quietly(() -> listener.onError(ex));
		}
	}

	private Answer exchange(ProviderEntry entry, HttpRequest request, Map<String, Object> scope) {
		URI uri = URI.create(request.url());
		byte[] sent = (request.body() != null) ? request.body().getBytes(StandardCharsets.UTF_8) : new byte[0];
		CallPlan plan = this.calls.plan(entry, uri, sent, scope::get);
		try {
			Answer answer = this.calls.exchange(plan, this.calls.deadline(plan, null), new Exchange(request));
			if (plan.retriedByClient(answer.status())) {
				// a refusal llm-quota passes on once its attempts are spent (an overload,
				// a 429 the provider says not to retry): an HttpException would map to an
				// exception LangChain4j retries, each retry running llm-quota's attempts
				// again
				try (InputStream body = answer.body()) {
					throw new NonRetriableException(
							"The provider answered " + answer.status() + " after llm-quota's attempts: "
									+ new String(body.readAllBytes(), StandardCharsets.UTF_8));
				}
			}
			return answer;
		}
		catch (LlmQuotaException ex) {
			// not retried again by LangChain4j, and not mapped to an HTTP error it would
			// retry: its cause chain holds no HttpException
			throw new NonRetriableException(ex.getMessage(), ex);
		}
		catch (IOException ex) {
			throw failure(ex);
		}
	}

	private ProviderEntry entry(HttpRequest request, Map<String, Object> scope) {
		if (!request.formDataFields().isEmpty() || !request.formDataFiles().isEmpty()) {
			// multipart uploads (audio, files) are not calls llm-quota meters
			return null;
		}
		try {
			return this.calls.entry(request.method().name(), URI.create(request.url()), (name) -> header(request, name),
					scope::get);
		}
		catch (LlmQuotaException ex) {
			// a call a route cannot serve: not retried by LangChain4j
			throw new NonRetriableException(ex.getMessage(), ex);
		}
	}

	private static String header(HttpRequest request, String name) {
		for (Map.Entry<String, List<String>> header : request.headers().entrySet()) {
			if (header.getKey().equalsIgnoreCase(name) && header.getValue() != null && !header.getValue().isEmpty()) {
				return header.getValue().get(0);
			}
		}
		return null;
	}

	/** A scope set with {@code LlmQuota.with(...)} on the calling thread. */
	private static Map<String, Object> scope() {
		return LlmQuota.currentScope();
	}

	private HttpClient plain() {
		HttpClient client = this.plain;
		if (client == null) {
			synchronized (this) {
				client = this.plain;
				if (client == null) {
					client = HttpClientBuilderLoader.loadHttpClientBuilder().readTimeout(this.readTimeout).build();
					this.plain = client;
				}
			}
		}
		return client;
	}

	private static SuccessfulHttpResponse response(Answer answer, byte[] body) {
		return SuccessfulHttpResponse.builder()
			.statusCode(answer.status())
			.headers(answer.headers().map())
			.body(body)
			.build();
	}

	/** As LangChain4j's own JDK client reports an I/O failure. */
	private static RuntimeException failure(IOException ex) {
		return (ex instanceof HttpTimeoutException) ? new TimeoutException(ex) : new UncheckedIOException(ex);
	}

	private static void quietly(Runnable signal) {
		try {
			signal.run();
		}
		catch (RuntimeException ex) {
			// a listener's failure must not break the call's accounting
		}
	}

	/** One attempt's answer: its head, and its body still to read. */
	private record Answer(int status, HttpHeaders headers, InputStream body) {

	}

	/** One governed call over the JDK's client. */
	private final class Exchange implements BlockingExchange<Answer> {

		private final HttpRequest request;

		Exchange(HttpRequest request) {
			this.request = request;
		}

		/** The JDK request of one attempt: to its URL, with its body and credentials. */
		private java.net.http.HttpRequest request(CallPlan attempt) {
			java.net.http.HttpRequest.Builder builder = java.net.http.HttpRequest.newBuilder(attempt.uri())
				.method(this.request.method().name(),
						java.net.http.HttpRequest.BodyPublishers.ofByteArray(attempt.body()));
			List<String> dropped = attempt.routed() ? attempt.entry().credentials().droppedOnRoutes() : List.of();
			this.request.headers().forEach((name, values) -> {
				if (values != null && !dropped.contains(name.toLowerCase(Locale.ROOT))) {
					values.forEach((value) -> builder.header(name, value));
				}
			});
			attempt.entry().credentials().applyTo(builder::setHeader);
			if (LlmQuotaHttpClient.this.readTimeout != null) {
				builder.timeout(LlmQuotaHttpClient.this.readTimeout);
			}
			return builder.build();
		}

		@Override
		public Answer send(CallPlan attempt) throws IOException {
			try {
				HttpResponse<InputStream> response = LlmQuotaHttpClient.this.client.send(request(attempt),
						HttpResponse.BodyHandlers.ofInputStream());
				return new Answer(response.statusCode(), response.headers(), response.body());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new InterruptedIOException("Interrupted while waiting for the answer");
			}
		}

		@Override
		public int status(Answer answer) {
			return answer.status();
		}

		@Override
		public void discard(Answer answer) {
			try {
				answer.body().close();
			}
			catch (IOException ex) {
				// nothing more to do with it
			}
		}

		@Override
		public HeaderLookup headers(Answer answer) {
			return (name) -> answer.headers().firstValue(name).orElse(null);
		}

		@Override
		public Answer readHead(Answer answer, StreamHead head) throws IOException {
			return new Answer(answer.status(), answer.headers(), head.readFrom(answer.body()));
		}

		@Override
		public byte[] readRefusal(Answer answer) throws IOException {
			try (InputStream body = answer.body()) {
				return body.readNBytes(LlmQuotaCalls.MAX_REFUSAL_BYTES);
			}
		}

		@Override
		public Answer follow(Answer answer, GovernedCall call) {
			long length = answer.headers().firstValueAsLong("Content-Length").orElse(-1);
			return new Answer(answer.status(), answer.headers(), new FollowingInputStream(answer.body(), call, length));
		}

		@Override
		public Answer passOn(Answer answer, byte[] body, boolean decided) {
			return new Answer(answer.status(), answer.headers(), new ByteArrayInputStream(body));
		}

	}

}
