package dev.llmquota.client.anthropic;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import com.anthropic.core.RequestOptions;
import com.anthropic.core.http.Headers;
import com.anthropic.core.http.HttpClient;
import com.anthropic.core.http.HttpRequest;
import com.anthropic.core.http.HttpRequestBody;
import com.anthropic.core.http.HttpResponse;
import com.anthropic.core.http.Interceptor;
import dev.llmquota.LlmQuota;
import dev.llmquota.client.BlockingExchange;
import dev.llmquota.client.BoundAttributes;
import dev.llmquota.client.CallPlan;
import dev.llmquota.client.Credentials;
import dev.llmquota.client.FollowingInputStream;
import dev.llmquota.client.GovernedCall;
import dev.llmquota.client.LlmQuotaCalls;
import dev.llmquota.client.ProviderEntry;
import dev.llmquota.client.StreamHead;
import dev.llmquota.provider.DialectId;
import dev.llmquota.provider.HeaderLookup;
import dev.llmquota.provider.LogOnce;
import dev.llmquota.provider.Waits;

/**
 * Governs the calls of Anthropic's Java SDK client built by hand: add it with
 * {@code AnthropicOkHttpClient.builder().addInterceptor(llmQuotaAnthropicInterceptor)}.
 * The SDK applies interceptors to every attempt, under its own retry loop, so what this
 * interceptor hands back when llm-quota gives up is something the SDK does not retry: the
 * provider's last answer marked {@code x-should-retry: false} (and
 * {@code x-llm-quota-exception}) where the provider answered, and the contract exception
 * itself where it did not, which the SDK neither retries nor wraps. An asynchronous call
 * waits for admission on a thread of llm-quota's.
 */
public final class LlmQuotaAnthropicInterceptor implements Interceptor {

	/** The header naming the contract exception behind an answer llm-quota hands on. */
	public static final String EXCEPTION_HEADER = "x-llm-quota-exception";

	private static final ExecutorService ADMISSIONS = Executors.newCachedThreadPool((task) -> {
		Thread thread = new Thread(task, "llm-quota-anthropic-sdk");
		thread.setDaemon(true);
		return thread;
	});

	private final LlmQuotaCalls calls;

	/** What the client's calls carry where their scope does not say. */
	private final BoundAttributes bound;

	/**
	 * Creates the interceptor.
	 * @param calls the call support
	 */
	public LlmQuotaAnthropicInterceptor(LlmQuotaCalls calls) {
		this(calls, BoundAttributes.NONE);
	}

	private LlmQuotaAnthropicInterceptor(LlmQuotaCalls calls, BoundAttributes bound) {
		this.calls = calls;
		this.bound = bound;
	}

	/**
	 * Returns an interceptor whose client's calls all carry an attribute, where a
	 * {@link LlmQuota#with} scope around a call does not set it: the way to give one the
	 * SDK's asynchronous client makes (its {@code async()} services call the interceptor
	 * on a pool thread, where no scope reaches). Binding {@link LlmQuota#PROVIDER} tells
	 * which entry a client's calls belong to where several have
	 * {@code dialect: anthropic}.
	 * @param attribute {@link LlmQuota#PROVIDER}, {@link LlmQuota#PRIORITY},
	 * {@link LlmQuota#MODEL} or {@link LlmQuota#MAX_WAIT}
	 * @param value its value
	 * @return a new interceptor, this one unchanged
	 * @throws IllegalArgumentException if the value is {@code null}, or names no provider
	 * entry
	 */
	public LlmQuotaAnthropicInterceptor with(String attribute, Object value) {
		return new LlmQuotaAnthropicInterceptor(this.calls, this.bound.with(this.calls, attribute, value));
	}

	@Override
	public HttpClient intercept(HttpClient client) {
		return new Governed(client);
	}

	/** The SDK's HTTP client, with each attempt governed. */
	private final class Governed implements HttpClient {

		private final HttpClient client;

		Governed(HttpClient client) {
			this.client = client;
		}

		@Override
		public HttpResponse execute(HttpRequest request, RequestOptions options) {
			return execute(request, options, null, LlmQuotaAnthropicInterceptor.this.bound.under(LlmQuota::current));
		}

		/**
		 * Governs a call with the scope it was made in: this thread's, or for an
		 * asynchronous call the one its caller's thread had.
		 */
		private HttpResponse execute(HttpRequest request, RequestOptions options, BooleanSupplier cancelled,
				Function<String, Object> scope) {
			URI uri = uri(request);
			ProviderEntry entry = entry(request, uri, scope);
			if (entry == null) {
				return this.client.execute(request, options);
			}
			if (entry.route() != null) {
				LogOnce.warn("anthropic sdk route", "The Anthropic SDK's calls cannot be sent over a route ("
						+ entry.route().name() + "): its adapter cannot rewrite their URL. Use the route from"
						+ " WebClient, RestClient, OkHttp, LangChain4j or Spring AI, or point the SDK at a provider entry");
				return this.client.execute(request, options);
			}
			if (uri.getHost() == null) {
				// the SDK sets its base URL below its interceptors: the entry's stands in
				uri = entry.provider().baseUrl();
			}
			HttpRequest buffered = withCredentials(request.buffered(), entry.credentials());
			CallPlan plan = LlmQuotaAnthropicInterceptor.this.calls.plan(entry, uri, bytes(buffered), scope);
			try {
				return LlmQuotaAnthropicInterceptor.this.calls.exchange(plan,
						LlmQuotaAnthropicInterceptor.this.calls.deadline(plan, null),
						new Exchange(this.client, buffered, options, cancelled));
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		@Override
		public CompletableFuture<HttpResponse> executeAsync(HttpRequest request, RequestOptions options) {
			// the scope of the thread that calls this, read here: the call goes on
			// another thread (the SDK's async services call from a pool thread of
			// theirs, where only what the interceptor binds reaches)
			Function<String, Object> scope = LlmQuotaAnthropicInterceptor.this.bound
				.under(LlmQuota.currentScope()::get);
			if (entry(request, uri(request), scope) == null) {
				return this.client.executeAsync(request, options);
			}
			// the admission wait and the attempt, off the caller's thread; the
			// exception of a call llm-quota does not admit fails the future,
			// which the SDK does not retry
			CompletableFuture<HttpResponse> result = new CompletableFuture<>();
			ADMISSIONS.execute(() -> {
				try {
					// a call cancelled (or timed out) before it is sent is given back
					// whole, not sent, and leaves the line at once while it waits
					HttpResponse response = execute(request, options, result::isDone, scope);
					if (!result.complete(response)) {
						// cancelled meanwhile: nobody will read it, and closing it ends
						// the call
						response.close();
					}
				}
				catch (RuntimeException | Error ex) {
					// wrapped as supplyAsync wraps it: what the SDK has always been given
					result.completeExceptionally(new CompletionException(ex));
				}
			});
			return result;
		}

		@Override
		public void close() {
			this.client.close();
		}

		private static HttpRequest withCredentials(HttpRequest request, Credentials credentials) {
			if (credentials.isEmpty()) {
				return request;
			}
			HttpRequest.Builder builder = request.toBuilder();
			credentials.applyTo(builder::replaceHeaders);
			return builder.build();
		}

		private ProviderEntry entry(HttpRequest request, URI uri, Function<String, Object> scope) {
			if (!"POST".equalsIgnoreCase(request.method().name())) {
				return null;
			}
			if (uri.getHost() == null) {
				return LlmQuotaAnthropicInterceptor.this.calls.entryOf(DialectId.ANTHROPIC, uri, scope);
			}
			return LlmQuotaAnthropicInterceptor.this.calls.entry(request.method().name(), uri,
					(name) -> first(request.headers(), name), scope);
		}

	}

	/**
	 * The request's URL; without a host where the SDK leaves the base URL to the layer
	 * below its interceptors (up to version 2).
	 */
	private static URI uri(HttpRequest request) {
		try {
			URI uri = URI.create(request.url());
			return (uri.getScheme() != null && uri.getScheme().startsWith("http")) ? uri
					: URI.create(request.url().replaceFirst("^null", ""));
		}
		catch (IllegalArgumentException ex) {
			return URI.create("/");
		}
	}

	/** One governed attempt over the SDK's own client. */
	private static final class Exchange implements BlockingExchange<HttpResponse> {

		private final HttpClient client;

		private final HttpRequest request;

		private final RequestOptions options;

		private final BooleanSupplier cancelled;

		Exchange(HttpClient client, HttpRequest request, RequestOptions options, BooleanSupplier cancelled) {
			this.client = client;
			this.request = request;
			this.options = options;
			this.cancelled = cancelled;
		}

		@Override
		public BooleanSupplier cancellation() {
			return this.cancelled;
		}

		@Override
		public HttpResponse send(CallPlan attempt) {
			return this.client.execute(this.request, this.options);
		}

		@Override
		public int status(HttpResponse response) {
			return response.statusCode();
		}

		@Override
		public void discard(HttpResponse response) {
			response.close();
		}

		@Override
		public HeaderLookup headers(HttpResponse response) {
			return (name) -> first(response.headers(), name);
		}

		@Override
		public HttpResponse readHead(HttpResponse response, StreamHead head) throws IOException {
			return new Answer(response, response.headers(), head.readFrom(response.body()));
		}

		@Override
		public byte[] readRefusal(HttpResponse response) throws IOException {
			try (response; InputStream body = response.body()) {
				return body.readNBytes(LlmQuotaCalls.MAX_REFUSAL_BYTES);
			}
		}

		@Override
		public HttpResponse follow(HttpResponse response, GovernedCall call) {
			long length = headerLong(response.headers(), "Content-Length");
			return new Answer(response, response.headers(), new FollowingInputStream(response.body(), call, length));
		}

		@Override
		public HttpResponse passOn(HttpResponse response, byte[] body, boolean decided) {
			// the SDK must not retry what llm-quota has already classified
			return new Answer(response, decided
					? response.headers().toBuilder().replace(Waits.SHOULD_RETRY, "false").build() : response.headers(),
					new ByteArrayInputStream(body));
		}

		@Override
		public HttpResponse failAfterAnswer(HttpResponse response, byte[] body, RuntimeException failure) {
			// the provider answered: its answer, which the SDK will not retry, naming why
			Answer answer = (Answer) passOn(response, body, true);
			return new Answer(response,
					answer.headers().toBuilder().replace(EXCEPTION_HEADER, failure.getClass().getSimpleName()).build(),
					answer.body());
		}

	}

	/**
	 * An answer whose head or body llm-quota has wrapped; closing it closes the SDK's.
	 */
	private static final class Answer implements HttpResponse {

		private final HttpResponse response;

		private final Headers headers;

		private final InputStream body;

		Answer(HttpResponse response, Headers headers, InputStream body) {
			this.response = response;
			this.headers = headers;
			this.body = body;
		}

		@Override
		public int statusCode() {
			return this.response.statusCode();
		}

		@Override
		public Headers headers() {
			return this.headers;
		}

		@Override
		public InputStream body() {
			return this.body;
		}

		@Override
		public void close() {
			try {
				this.body.close();
			}
			catch (IOException ex) {
				// the SDK's answer is closed below either way
			}
			finally {
				this.response.close();
			}
		}

	}

	/**
	 * The request's body: {@code body()} answers the body itself up to version 2 of the
	 * SDK and an {@code Optional} of it from version 3, so it is read either way.
	 */
	private static byte[] bytes(HttpRequest request) {
		Object body;
		try {
			body = HttpRequest.class.getMethod("body").invoke(request);
		}
		catch (ReflectiveOperationException ex) {
			throw new IllegalStateException("This version of Anthropic's SDK has no request body llm-quota can read",
					ex);
		}
		if (body instanceof Optional<?> optional) {
			body = optional.orElse(null);
		}
		if (!(body instanceof HttpRequestBody content)) {
			return new byte[0];
		}
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		content.writeTo(out);
		return out.toByteArray();
	}

	private static String first(Headers headers, String name) {
		for (String header : headers.names()) {
			if (header.equalsIgnoreCase(name)) {
				List<String> values = headers.values(header);
				return values.isEmpty() ? null : values.get(0);
			}
		}
		return null;
	}

	private static long headerLong(Headers headers, String name) {
		String value = first(headers, name);
		try {
			return (value != null) ? Long.parseLong(value.trim()) : -1;
		}
		catch (NumberFormatException ex) {
			return -1;
		}
	}

}
