package dev.llmquota.client.okhttp;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import dev.llmquota.LlmQuota;
import dev.llmquota.LlmQuotaException;
import dev.llmquota.QuotaWaitTimeoutException;
import dev.llmquota.RateLimitedException;
import dev.llmquota.UnroutableCallException;
import dev.llmquota.client.BlockingExchange;
import dev.llmquota.client.BoundAttributes;
import dev.llmquota.client.CallPlan;
import dev.llmquota.client.GovernedCall;
import dev.llmquota.client.LlmQuotaCalls;
import dev.llmquota.client.ProviderEntry;
import dev.llmquota.client.StreamHead;
import dev.llmquota.provider.HeaderLookup;
import dev.llmquota.provider.Waits;
import okhttp3.HttpUrl;
import okhttp3.Interceptor;
import okhttp3.MediaType;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;
import okio.Buffer;
import okio.BufferedSource;
import okio.ForwardingSource;
import okio.Okio;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Governs OkHttp calls to LLM providers (the HTTP client of Spring AI's OpenAI and
 * Anthropic SDK clients): the calling thread waits for admission within what is left of
 * the call's {@code callTimeout} and {@code max-wait}, refusals are classified and
 * retried or failed, and the answer's body is read on its way so the call ends exactly
 * once, when it is read to its end or closed.
 * <p>
 * The SDKs on OkHttp retry by themselves, so what they receive must be something they do
 * not retry again: where the provider answered, its last answer, marked
 * {@code x-should-retry: false}; where it did not (no admission within max-wait, a spent
 * quota failing fast), the contract exception itself on a synchronous call, which the
 * SDKs do not retry, and on an asynchronous call, where OkHttp would turn any exception
 * into an {@code IOException} they retry, an answer of llm-quota's own: 429 or 503 with
 * {@code x-should-retry: false}, the exception's message, and its type in
 * {@code x-llm-quota-exception}.
 */
public final class LlmQuotaOkHttpInterceptor implements Interceptor {

	/** The header naming the contract exception behind an answer llm-quota hands on. */
	public static final String EXCEPTION_HEADER = "x-llm-quota-exception";

	private final LlmQuotaCalls calls;

	/** What the client's calls carry where their scope does not say. */
	private final BoundAttributes bound;

	/**
	 * Creates the interceptor.
	 * @param calls the calls facade
	 */
	public LlmQuotaOkHttpInterceptor(LlmQuotaCalls calls) {
		this(calls, BoundAttributes.NONE);
	}

	private LlmQuotaOkHttpInterceptor(LlmQuotaCalls calls, BoundAttributes bound) {
		this.calls = calls;
		this.bound = bound;
	}

	/**
	 * Returns an interceptor whose client's calls all carry an attribute, where a
	 * {@link LlmQuota#with} scope on the calling thread does not set it: the way to give
	 * one the calls OkHttp itself enqueues (an SDK's asynchronous client), which it runs
	 * on a dispatcher thread, where no scope reaches.
	 * @param attribute {@link LlmQuota#PROVIDER}, {@link LlmQuota#PRIORITY},
	 * {@link LlmQuota#MODEL} or {@link LlmQuota#MAX_WAIT}
	 * @param value its value
	 * @return a new interceptor, this one unchanged
	 * @throws IllegalArgumentException if the value is {@code null}, or names no provider
	 * entry
	 */
	public LlmQuotaOkHttpInterceptor with(String attribute, Object value) {
		return new LlmQuotaOkHttpInterceptor(this.calls, this.bound.with(this.calls, attribute, value));
	}

	@Override
	public Response intercept(Chain chain) throws IOException {
		Request request = chain.request();
		// no attributes on an SDK's requests: a scope on the calling thread steers them,
		// then what this interceptor is bound to
		Function<String, Object> attributes = this.bound.under(LlmQuota::current);
		try {
			ProviderEntry entry = this.calls.entry(request.method(), request.url().uri(), request::header, attributes);
			RequestBody original = request.body();
			if (entry == null || original == null) {
				return chain.proceed(request);
			}
			Buffer buffer = new Buffer();
			original.writeTo(buffer);
			byte[] body = buffer.readByteArray();
			return governed(chain, request, original.contentType(), entry, body, attributes);
		}
		catch (LlmQuotaException ex) {
			if (asynchronous(chain)) {
				return refusal(request, ex);
			}
			throw ex;
		}
	}

	/**
	 * Whether OkHttp runs this call for an enqueued caller: it names the dispatcher's
	 * thread after the call while it runs it.
	 */
	private static boolean asynchronous(Chain chain) {
		return Thread.currentThread().getName().equals("OkHttp " + chain.call().request().url().redact());
	}

	/**
	 * llm-quota's own answer, for a caller OkHttp would otherwise hand an IOException.
	 */
	static Response refusal(Request request, LlmQuotaException failure) {
		boolean later = failure instanceof QuotaWaitTimeoutException || failure instanceof RateLimitedException;
		boolean unroutable = failure instanceof UnroutableCallException;
		Response.Builder answer = new Response.Builder().request(request)
			.protocol(Protocol.HTTP_1_1)
			.code(unroutable ? 400 : later ? 429 : 503)
			.message(unroutable ? "Bad Request" : later ? "Too Many Requests" : "Service Unavailable")
			.header(Waits.SHOULD_RETRY, "false")
			.header(EXCEPTION_HEADER, failure.getClass().getSimpleName());
		Duration retryAfter = failure.getRetryAfter();
		if (retryAfter != null) {
			answer.header("retry-after", Long.toString(Math.max(1, (retryAfter.toMillis() + 999) / 1000)));
		}
		ObjectNode body = JsonMapper.shared().createObjectNode().put("type", "error");
		body.putObject("error")
			.put("type", "llm_quota")
			.put("code", failure.getClass().getSimpleName())
			.put("message", failure.getMessage());
		return answer
			.body(ResponseBody.create(JsonMapper.shared().writeValueAsBytes(body), MediaType.get("application/json")))
			.build();
	}

	private Response governed(Chain chain, Request request, MediaType contentType, ProviderEntry entry, byte[] body,
			Function<String, Object> attributes) throws IOException {
		CallPlan plan = this.calls.plan(entry, request.url().uri(), body, attributes);
		// the wait must fit inside the call's own timeout
		long callTimeout = chain.call().timeout().timeoutNanos();
		long deadline = this.calls.deadline(plan, (callTimeout > 0) ? Duration.ofNanos(callTimeout) : null);
		return this.calls.exchange(plan, deadline, new BlockingExchange<>() {

			@Override
			public Response send(CallPlan attempt) throws IOException {
				Request.Builder builder = request.newBuilder()
					.method(request.method(), RequestBody.create(attempt.body(), contentType));
				if (attempt.routed()) {
					builder.url(HttpUrl.get(attempt.uri()));
					attempt.entry().credentials().droppedOnRoutes().forEach(builder::removeHeader);
				}
				attempt.entry().credentials().applyTo(builder::header);
				// the SDK's own retries stand where llm-quota does not enforce
				Request sent = builder.build();
				return chain.proceed(attempt.enforced() ? GoogleGenAiRetries.leftToLlmQuota(sent) : sent);
			}

			@Override
			public BooleanSupplier cancellation() {
				return chain.call()::isCanceled;
			}

			@Override
			public int status(Response response) {
				return response.code();
			}

			@Override
			public void discard(Response response) {
				response.close();
			}

			@Override
			public HeaderLookup headers(Response response) {
				return response::header;
			}

			@Override
			public Response readHead(Response response, StreamHead head) throws IOException {
				ResponseBody body = response.body();
				if (body == null) {
					head.end();
					return response;
				}
				// read ahead without consuming: the body still yields every byte
				BufferedSource ahead = body.source().peek();
				Buffer chunk = new Buffer();
				while (!head.decided()) {
					long count = ahead.read(chunk, 8192);
					if (count < 0) {
						head.end();
					}
					else {
						head.feed(ByteBuffer.wrap(chunk.readByteArray()));
					}
				}
				return response;
			}

			@Override
			public byte[] readRefusal(Response response) throws IOException {
				try (ResponseBody refused = response.body()) {
					return (refused != null) ? LlmQuotaOkHttpInterceptor.readRefusal(refused.source()) : new byte[0];
				}
			}

			@Override
			public Response follow(Response response, GovernedCall call) {
				return followed(response, call);
			}

			@Override
			public Response passOn(Response response, byte[] refusal, boolean decided) {
				ResponseBody original = response.body();
				MediaType type = (original != null) ? original.contentType() : null;
				Response.Builder passed = response.newBuilder().body(ResponseBody.create(refusal, type));
				// the SDK must not retry what llm-quota has already classified
				return decided ? passed.header(Waits.SHOULD_RETRY, "false").build() : passed.build();
			}

			@Override
			public Response failAfterAnswer(Response response, byte[] refusal, RuntimeException failure) {
				// the provider answered: its answer, which the SDK will not retry
				return passOn(response, refusal, true).newBuilder()
					.header(EXCEPTION_HEADER, failure.getClass().getSimpleName())
					.build();
			}

		});
	}

	private static byte[] readRefusal(BufferedSource source) throws IOException {
		source.request(LlmQuotaCalls.MAX_REFUSAL_BYTES);
		Buffer buffered = source.getBuffer();
		return buffered.readByteArray(Math.min(buffered.size(), LlmQuotaCalls.MAX_REFUSAL_BYTES));
	}

	private static Response followed(Response response, GovernedCall call) {
		ResponseBody body = response.body();
		if (body == null) {
			call.onComplete();
			return response;
		}
		return response.newBuilder().body(new FollowingBody(body, call)).build();
	}

	/** The answer's body, read on its way to the caller. */
	private static final class FollowingBody extends ResponseBody {

		private final ResponseBody body;

		private final BufferedSource source;

		FollowingBody(ResponseBody body, GovernedCall call) {
			this.body = body;
			long contentLength = body.contentLength();
			this.source = Okio.buffer(new ForwardingSource(body.source()) {

				private long read;

				@Override
				public long read(Buffer sink, long byteCount) throws IOException {
					long count;
					try {
						count = super.read(sink, byteCount);
					}
					catch (IOException | RuntimeException ex) {
						call.onAbort();
						throw ex;
					}
					if (count < 0) {
						call.onComplete();
					}
					else if (count > 0) {
						this.read += count;
						Buffer copy = new Buffer();
						sink.copyTo(copy, sink.size() - count, count);
						call.onBody(ByteBuffer.wrap(copy.readByteArray()));
					}
					return count;
				}

				@Override
				public void close() throws IOException {
					try {
						super.close();
					}
					finally {
						// a reader that stops at the declared length never sees the end
						// of the source
						if (contentLength >= 0 && this.read >= contentLength) {
							call.onComplete();
						}
						else {
							call.onAbort();
						}
					}
				}

			});
		}

		@Override
		public MediaType contentType() {
			return this.body.contentType();
		}

		@Override
		public long contentLength() {
			return this.body.contentLength();
		}

		@Override
		public BufferedSource source() {
			return this.source;
		}

	}

}
