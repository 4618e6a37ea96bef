package dev.llmquota.client.aws;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

import dev.llmquota.LlmQuota;
import dev.llmquota.LlmQuotaException;
import dev.llmquota.client.BlockingExchange;
import dev.llmquota.client.BoundAttributes;
import dev.llmquota.client.CallPlan;
import dev.llmquota.client.Credentials;
import dev.llmquota.client.FollowingInputStream;
import dev.llmquota.client.GovernedCall;
import dev.llmquota.client.LlmQuotaCalls;
import dev.llmquota.client.Outcome;
import dev.llmquota.client.ProviderEntry;
import dev.llmquota.client.RetryPolicy;
import dev.llmquota.client.StreamHead;
import dev.llmquota.provider.HeaderLookup;
import dev.llmquota.provider.LogOnce;
import io.github.resilience4j.retry.Retry;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import software.amazon.awssdk.core.exception.NonRetryableException;
import software.amazon.awssdk.http.AbortableInputStream;
import software.amazon.awssdk.http.ExecutableHttpRequest;
import software.amazon.awssdk.http.HttpExecuteRequest;
import software.amazon.awssdk.http.HttpExecuteResponse;
import software.amazon.awssdk.http.SdkHttpClient;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.SdkHttpResponse;
import software.amazon.awssdk.http.async.AsyncExecuteRequest;
import software.amazon.awssdk.http.async.SdkAsyncHttpClient;
import software.amazon.awssdk.http.async.SdkAsyncHttpResponseHandler;
import software.amazon.awssdk.http.async.SdkHttpContentPublisher;

/**
 * Governs the AWS SDK's calls to Bedrock: wrap the HTTP client a
 * {@code BedrockRuntimeClient} or {@code BedrockRuntimeAsyncClient} is built with.
 *
 * <pre class="code">
 * BedrockRuntimeClient bedrock = BedrockRuntimeClient.builder()
 *     .httpClient(llmQuotaAwsHttpClients.govern(ApacheHttpClient.create()))
 *     .build();
 * </pre>
 *
 * The SDK signs each request before it reaches the HTTP client; the very bytes it signed
 * are sent. Its retry strategy (three retries of throttling and server errors by default)
 * sits above the HTTP client, so what llm-quota gives up on reaches it as a
 * {@link NonRetryableException} whose cause is the contract exception: the SDK does not
 * retry it. The asynchronous client waits for admission without a thread, and its event
 * streams (ConverseStream, InvokeModelWithResponseStream) hold their slot to the last
 * byte and are charged from their metadata.
 */
public final class LlmQuotaAwsHttpClients {

	private final LlmQuotaCalls calls;

	/** What the governed clients' calls carry where their scope does not say. */
	private final BoundAttributes bound;

	/**
	 * Creates the factory.
	 * @param calls the call support
	 */
	public LlmQuotaAwsHttpClients(LlmQuotaCalls calls) {
		this(calls, BoundAttributes.NONE);
	}

	private LlmQuotaAwsHttpClients(LlmQuotaCalls calls, BoundAttributes bound) {
		this.calls = calls;
		this.bound = bound;
	}

	/**
	 * Returns a factory whose governed clients' calls all carry an attribute, where a
	 * {@link LlmQuota#with} scope on the calling thread does not set it: the way to give
	 * one the attempts an asynchronous client's retry strategy makes on the SDK's own
	 * threads, where no scope reaches.
	 * @param attribute {@link LlmQuota#PROVIDER}, {@link LlmQuota#PRIORITY},
	 * {@link LlmQuota#MODEL} or {@link LlmQuota#MAX_WAIT}
	 * @param value its value
	 * @return a new factory, this one unchanged
	 * @throws IllegalArgumentException if the value is {@code null}, or names no provider
	 * entry
	 */
	public LlmQuotaAwsHttpClients with(String attribute, Object value) {
		return new LlmQuotaAwsHttpClients(this.calls, this.bound.with(this.calls, attribute, value));
	}

	/** A call's attributes: its scope's, then what this factory is bound to. */
	private Function<String, Object> attributes() {
		return this.bound.under(LlmQuota::current);
	}

	/**
	 * Governs a synchronous HTTP client.
	 * @param client the client the SDK would use
	 * @return the governed client, which closes the given one when closed
	 */
	public SdkHttpClient govern(SdkHttpClient client) {
		return new GovernedClient(client);
	}

	/**
	 * Governs an asynchronous HTTP client.
	 * @param client the client the SDK would use
	 * @return the governed client, which closes the given one when closed
	 */
	public SdkAsyncHttpClient govern(SdkAsyncHttpClient client) {
		return new GovernedAsyncClient(client);
	}

	private ProviderEntry entry(SdkHttpRequest request) {
		ProviderEntry entry = this.calls.entry(request.method().name(), request.getUri(),
				(name) -> request.firstMatchingHeader(name).orElse(null), attributes());
		if (entry != null && entry.route() != null) {
			// start-up refuses Bedrock in routes; an endpoint override pointing here is
			// a mistake the call's failure to resolve shows
			LogOnce.warn("aws route", "An AWS SDK client's endpoint is route " + entry.route().name()
					+ "'s URL: routes do not take Bedrock calls (SigV4 signs the URL and body a route rewrites)");
			return null;
		}
		return entry;
	}

	/** What the SDK gets when llm-quota gives up: an exception it does not retry. */
	private static NonRetryableException giveUp(RuntimeException failure) {
		return NonRetryableException.builder().message(failure.getMessage()).cause(failure).build();
	}

	private static NonRetryableException answeredAfterOurAttempts(int status, byte[] body) {
		return NonRetryableException.create("The provider answered " + status + " after llm-quota's attempts: "
				+ new String(body, StandardCharsets.UTF_8));
	}

	/** The SDK's synchronous HTTP client, each call governed. */
	private final class GovernedClient implements SdkHttpClient {

		private final SdkHttpClient client;

		GovernedClient(SdkHttpClient client) {
			this.client = client;
		}

		@Override
		public ExecutableHttpRequest prepareRequest(HttpExecuteRequest request) {
			ProviderEntry entry = entry(request.httpRequest());
			if (entry == null) {
				return this.client.prepareRequest(request);
			}
			return new GovernedRequest(this.client, request, entry);
		}

		@Override
		public String clientName() {
			return this.client.clientName();
		}

		@Override
		public void close() {
			this.client.close();
		}

	}

	/** One call of the synchronous client: every attempt through admission. */
	private final class GovernedRequest implements ExecutableHttpRequest, BlockingExchange<HttpExecuteResponse> {

		private final SdkHttpClient client;

		private final HttpExecuteRequest request;

		private final ProviderEntry entry;

		private final AtomicBoolean aborted = new AtomicBoolean();

		private volatile ExecutableHttpRequest current;

		private CallPlan plan;

		GovernedRequest(SdkHttpClient client, HttpExecuteRequest request, ProviderEntry entry) {
			this.client = client;
			this.request = request;
			this.entry = entry;
		}

		@Override
		public HttpExecuteResponse call() throws IOException {
			byte[] body = read(this.request);
			URI uri = this.request.httpRequest().getUri();
			this.plan = LlmQuotaAwsHttpClients.this.calls.plan(this.entry, uri, body, attributes());
			try {
				return LlmQuotaAwsHttpClients.this.calls.exchange(this.plan,
						LlmQuotaAwsHttpClients.this.calls.deadline(this.plan, null), this);
			}
			catch (LlmQuotaException ex) {
				throw giveUp(ex);
			}
		}

		@Override
		public void abort() {
			this.aborted.set(true);
			ExecutableHttpRequest attempt = this.current;
			if (attempt != null) {
				attempt.abort();
			}
		}

		@Override
		public HttpExecuteResponse send(CallPlan plan) throws IOException {
			if (this.aborted.get()) {
				throw new IOException("The request was aborted");
			}
			byte[] body = this.plan.body();
			HttpExecuteRequest.Builder attempt = HttpExecuteRequest.builder()
				.request(withCredentials(this.request.httpRequest(), this.entry.credentials()))
				.contentStreamProvider(() -> new ByteArrayInputStream(body));
			this.request.metricCollector().ifPresent(attempt::metricCollector);
			this.current = this.client.prepareRequest(attempt.build());
			return this.current.call();
		}

		@Override
		public int status(HttpExecuteResponse response) {
			return response.httpResponse().statusCode();
		}

		@Override
		public void discard(HttpExecuteResponse response) {
			response.responseBody().ifPresent((body) -> {
				try {
					body.close();
				}
				catch (IOException ex) {
					// nothing more to do with it
				}
			});
		}

		@Override
		public HeaderLookup headers(HttpExecuteResponse response) {
			return (name) -> response.httpResponse().firstMatchingHeader(name).orElse(null);
		}

		@Override
		public HttpExecuteResponse readHead(HttpExecuteResponse response, StreamHead head) throws IOException {
			InputStream body = response.responseBody()
				.map(InputStream.class::cast)
				.orElse(InputStream.nullInputStream());
			return respond(response.httpResponse(), head.readFrom(body));
		}

		@Override
		public byte[] readRefusal(HttpExecuteResponse response) throws IOException {
			if (response.responseBody().isEmpty()) {
				return new byte[0];
			}
			try (InputStream body = response.responseBody().get()) {
				return body.readNBytes(LlmQuotaCalls.MAX_REFUSAL_BYTES);
			}
		}

		@Override
		public HttpExecuteResponse follow(HttpExecuteResponse response, GovernedCall call) {
			InputStream body = response.responseBody()
				.map(InputStream.class::cast)
				.orElse(InputStream.nullInputStream());
			long length = response.httpResponse()
				.firstMatchingHeader("Content-Length")
				.map(LlmQuotaAwsHttpClients::parseLength)
				.orElse(-1L);
			return respond(response.httpResponse(), new FollowingInputStream(body, call, length));
		}

		@Override
		public HttpExecuteResponse passOn(HttpExecuteResponse response, byte[] body, boolean decided) {
			int status = response.httpResponse().statusCode();
			if (this.plan.retriedByClient(status)) {
				throw answeredAfterOurAttempts(status, body);
			}
			return respond(response.httpResponse(), new ByteArrayInputStream(body));
		}

		@Override
		public HttpExecuteResponse failAfterAnswer(HttpExecuteResponse response, byte[] body,
				RuntimeException failure) {
			throw giveUp(failure);
		}

		private HttpExecuteResponse respond(SdkHttpResponse head, InputStream body) {
			return HttpExecuteResponse.builder()
				.response(head)
				.responseBody(AbortableInputStream.create(body, this::abort))
				.build();
		}

		private static byte[] read(HttpExecuteRequest request) throws IOException {
			if (request.contentStreamProvider().isEmpty()) {
				return new byte[0];
			}
			try (InputStream in = request.contentStreamProvider().get().newStream()) {
				return in.readAllBytes();
			}
		}

	}

	private static long parseLength(String value) {
		try {
			return Long.parseLong(value.trim());
		}
		catch (NumberFormatException ex) {
			return -1;
		}
	}

	/** The SDK's asynchronous HTTP client, each call governed without a thread. */
	private final class GovernedAsyncClient implements SdkAsyncHttpClient {

		private final SdkAsyncHttpClient client;

		GovernedAsyncClient(SdkAsyncHttpClient client) {
			this.client = client;
		}

		@Override
		public CompletableFuture<Void> execute(AsyncExecuteRequest request) {
			ProviderEntry entry = entry(request.request());
			if (entry == null) {
				return this.client.execute(request);
			}
			if (request.fullDuplex()) {
				// a bidirectional session's input flows while the model answers: its
				// body ends with the session, so it cannot be read first to plan it
				LogOnce.warn("aws full duplex", "An AWS SDK client's bidirectional stream ("
						+ request.request().getUri().getRawPath() + ") is sent as it comes and not governed: its"
						+ " input ends with the session, so llm-quota cannot read it to reserve before sending");
				return this.client.execute(request);
			}
			CompletableFuture<Void> result = new CompletableFuture<>();
			Flux.from(request.requestContentPublisher()).reduce(new ByteArrayOutputStream(), (out, buffer) -> {
				byte[] bytes = new byte[buffer.remaining()];
				buffer.duplicate().get(bytes);
				out.writeBytes(bytes);
				return out;
			}).map(ByteArrayOutputStream::toByteArray).defaultIfEmpty(new byte[0]).subscribe((body) -> {
				CallPlan plan = LlmQuotaAwsHttpClients.this.calls.plan(entry, request.request().getUri(), body,
						attributes());
				new AsyncCall(this.client, request, plan, result).attempt(1);
			}, (error) -> fail(request, result, error));
			return result;
		}

		@Override
		public String clientName() {
			return this.client.clientName();
		}

		@Override
		public void close() {
			this.client.close();
		}

	}

	/**
	 * The request with the entry's headers set; they are not signed (a SigV4 signature
	 * covers the headers it lists only).
	 */
	private static SdkHttpRequest withCredentials(SdkHttpRequest request, Credentials credentials) {
		if (credentials.isEmpty()) {
			return request;
		}
		SdkHttpRequest.Builder builder = request.toBuilder();
		credentials.applyTo(builder::putHeader);
		return builder.build();
	}

	private static void fail(AsyncExecuteRequest request, CompletableFuture<Void> result, Throwable error) {
		try {
			request.responseHandler().onError(error);
		}
		finally {
			result.completeExceptionally(error);
		}
	}

	/** One call of the asynchronous client, attempt after attempt. */
	private final class AsyncCall {

		private final SdkAsyncHttpClient client;

		private final AsyncExecuteRequest request;

		private final CallPlan plan;

		private final long deadline;

		private final CompletableFuture<Void> result;

		/** The entry's retry, which counts this call's attempts as on every stack. */
		private final Retry.AsyncContext<Void> retry;

		AsyncCall(SdkAsyncHttpClient client, AsyncExecuteRequest request, CallPlan plan,
				CompletableFuture<Void> result) {
			this.client = client;
			this.request = request;
			this.plan = plan;
			this.deadline = LlmQuotaAwsHttpClients.this.calls.deadline(plan, null);
			this.result = result;
			this.retry = LlmQuotaAwsHttpClients.this.calls.retryPolicy().of(plan.retryName()).asyncContext();
			// the call ends once, however: answered (a refusal handed on included),
			// failed, or given up by the SDK
			result.whenComplete((ignored, error) -> {
				if (error == null) {
					this.retry.onComplete();
				}
				else {
					this.retry.onError((error instanceof CompletionException) ? error.getCause() : error);
				}
			});
		}

		void attempt(int attempt) {
			Disposable admission = LlmQuotaAwsHttpClients.this.calls.admit(this.plan, this.deadline)
				.subscribe((permit) -> {
					if (this.result.isDone()) {
						// the SDK gave up on the call as it was admitted: it is not sent
						permit.cancel();
						return;
					}
					GovernedCall call = LlmQuotaAwsHttpClients.this.calls.start(this.plan, permit);
					Handler handler = new Handler(call, attempt);
					AsyncExecuteRequest.Builder sent = AsyncExecuteRequest.builder()
						.request(withCredentials(this.request.request(), this.plan.entry().credentials()))
						.requestContentPublisher(new BytesPublisher(this.plan.body()))
						.responseHandler(handler)
						.fullDuplex(this.request.fullDuplex())
						.httpExecutionAttributes(this.request.httpExecutionAttributes());
					this.request.metricCollector().ifPresent(sent::metricCollector);
					CompletableFuture<Void> sending = this.client.execute(sent.build());
					sending.whenComplete((ignored, error) -> handler.ended(error));
					// the SDK gives up on a call in flight (its attempt timeout) by
					// failing
					// this future, as it fails an HTTP client's own: the attempt below is
					// failed alike (a real client aborts its request), and so ends
					this.result.whenComplete((ignored, error) -> {
						if (error != null && !sending.isDone()) {
							sending.completeExceptionally(error);
						}
					});
				}, (error) -> fail(this.request, this.result,
						(error instanceof LlmQuotaException quota) ? giveUp(quota) : error));
			// the SDK gives up on a call (its API call timeout, a cancel) by ending its
			// future: a call still waiting leaves the queue
			this.result.whenComplete((ignored, error) -> admission.dispose());
		}

		/** Takes one attempt's answer: hands a success on, and decides on a refusal. */
		private final class Handler implements SdkAsyncHttpResponseHandler {

			private final GovernedCall call;

			private final int attempt;

			private SdkHttpResponse head;

			private volatile boolean passing;

			private volatile boolean decided;

			Handler(GovernedCall call, int attempt) {
				this.call = call;
				this.attempt = attempt;
			}

			@Override
			public void onHeaders(SdkHttpResponse response) {
				this.head = response;
				this.call.onResponse(response.statusCode(), (name) -> response.firstMatchingHeader(name).orElse(null));
				if (response.statusCode() < 400) {
					this.passing = true;
					AsyncCall.this.request.responseHandler().onHeaders(response);
				}
			}

			@Override
			public void onStream(Publisher<ByteBuffer> stream) {
				if (this.passing) {
					AsyncCall.this.request.responseHandler()
						.onStream(Flux.from(stream)
							.doOnNext(this.call::onBody)
							.doOnComplete(this.call::onComplete)
							.doOnError((error) -> this.call.onAbort())
							.doOnCancel(this.call::onAbort));
					return;
				}
				Flux.from(stream).reduce(new ByteArrayOutputStream(), (out, buffer) -> {
					if (out.size() < LlmQuotaCalls.MAX_REFUSAL_BYTES) {
						byte[] bytes = new byte[buffer.remaining()];
						buffer.duplicate().get(bytes);
						out.writeBytes(bytes);
					}
					return out;
				})
					.map(ByteArrayOutputStream::toByteArray)
					.defaultIfEmpty(new byte[0])
					// a refusal whose body could not be read is decided by its status
					// and headers alone, as on every stack
					.subscribe(this::refused, (error) -> refused(new byte[0]));
			}

			/**
			 * Decides a refusal, once: its body read, or not (an error, told either way).
			 */
			private synchronized void refused(byte[] body) {
				if (this.decided) {
					return;
				}
				this.decided = true;
				SdkHttpResponse response = this.head;
				Outcome outcome;
				try {
					// the penalty is in the books before the slots go back
					outcome = LlmQuotaAwsHttpClients.this.calls.answered(this.call, response.statusCode(),
							(name) -> response.firstMatchingHeader(name).orElse(null), body, this.attempt,
							AsyncCall.this.deadline);
				}
				finally {
					this.call.onBody(ByteBuffer.wrap(body));
					this.call.onComplete();
				}
				switch (outcome.action()) {
					case RETRY -> {
						// counted as every stack's retries are; the wait is the
						// outcome's,
						// which the policy's interval is too
						AsyncCall.this.retry.onError(RetryPolicy.RetryAfter.of(outcome));
						Mono.delay(outcome.delay()).subscribe((ignored) -> attempt(this.attempt + 1));
					}
					case FAIL -> settle(giveUp(outcome.failure()));
					default -> {
						if (AsyncCall.this.plan.retriedByClient(response.statusCode())) {
							settle(answeredAfterOurAttempts(response.statusCode(), body));
						}
						else {
							SdkAsyncHttpResponseHandler handler = AsyncCall.this.request.responseHandler();
							handler.onHeaders(response);
							handler.onStream(Flux.just(ByteBuffer.wrap(body)));
							AsyncCall.this.result.complete(null);
						}
					}
				}
			}

			@Override
			public void onError(Throwable error) {
				if (this.head != null && !this.passing) {
					// a refusal whose body could not be read: decided by its status
					// and headers alone, as on every stack
					refused(new byte[0]);
					return;
				}
				if (this.head == null) {
					this.call.onNoResponse();
				}
				else {
					this.call.onAbort();
				}
				if (this.passing || !this.decided) {
					this.decided = true;
					settle(error);
				}
			}

			/** The attempt's exchange ended: a success hands its end on. */
			void ended(Throwable error) {
				if (!this.passing) {
					if (error != null && this.head != null) {
						// a refusal whose body could not be read, told only here
						refused(new byte[0]);
					}
					else if (error != null && !this.decided) {
						this.call.onNoResponse();
						this.decided = true;
						settle(error);
					}
					return;
				}
				if (error != null) {
					// a client may report a failure through its future alone, after the
					// headers and before (or without) a signal of the body's
					this.call.onAbort();
					AsyncCall.this.result.completeExceptionally(error);
				}
				else {
					AsyncCall.this.result.complete(null);
				}
			}

			private void settle(Throwable error) {
				fail(AsyncCall.this.request, AsyncCall.this.result, error);
			}

		}

	}

	/** A request body of known bytes, which each attempt sends again. */
	private static final class BytesPublisher implements SdkHttpContentPublisher {

		private final byte[] bytes;

		BytesPublisher(byte[] bytes) {
			this.bytes = bytes;
		}

		@Override
		public Optional<Long> contentLength() {
			return Optional.of((long) this.bytes.length);
		}

		@Override
		public void subscribe(Subscriber<? super ByteBuffer> subscriber) {
			Flux.just(ByteBuffer.wrap(this.bytes)).subscribe(subscriber);
		}

	}

}
