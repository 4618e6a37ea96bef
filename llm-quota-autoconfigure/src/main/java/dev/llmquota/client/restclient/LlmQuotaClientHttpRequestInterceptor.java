package dev.llmquota.client.restclient;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.Map;
import java.util.function.Function;

import dev.llmquota.LlmQuota;
import dev.llmquota.client.BlockingExchange;
import dev.llmquota.client.CallPlan;
import dev.llmquota.client.FollowingInputStream;
import dev.llmquota.client.GovernedCall;
import dev.llmquota.client.LlmQuotaCalls;
import dev.llmquota.client.ProviderEntry;
import dev.llmquota.client.StreamHead;
import dev.llmquota.provider.HeaderLookup;
import dev.llmquota.provider.Waits;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpRequest;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.http.client.support.HttpRequestWrapper;

/**
 * Governs a {@code RestClient}'s calls to LLM providers, the blocking twin of the
 * WebClient filter: the calling thread waits for admission (parked, never holding a
 * monitor), the body goes out as the client wrote it, a refusal is classified and retried
 * or failed, and the answer's body is read on its way to the caller so the call ends
 * exactly once, when it is read to its end or closed.
 */
public final class LlmQuotaClientHttpRequestInterceptor implements ClientHttpRequestInterceptor {

	private final LlmQuotaCalls calls;

	/**
	 * Creates the interceptor.
	 * @param calls the calls facade
	 */
	public LlmQuotaClientHttpRequestInterceptor(LlmQuotaCalls calls) {
		this.calls = calls;
	}

	@Override
	public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
			throws IOException {
		Map<String, Object> requestAttributes = request.getAttributes();
		// an attribute on the request wins; else a scope on this thread (LlmQuota.with)
		Function<String, Object> attributes = (name) -> requestAttributes.containsKey(name)
				? requestAttributes.get(name) : LlmQuota.current(name);
		ProviderEntry entry = this.calls.entry(request.getMethod().name(), request.getURI(),
				request.getHeaders()::getFirst, attributes);
		if (entry == null) {
			return execution.execute(request, body);
		}
		CallPlan plan = this.calls.plan(entry, request.getURI(), body, attributes);
		return this.calls.exchange(plan, this.calls.deadline(plan, null), new BlockingExchange<>() {

			@Override
			public ClientHttpResponse send(CallPlan attempt) throws IOException {
				return execution.execute(attempt(request, body, attempt), attempt.body());
			}

			@Override
			public int status(ClientHttpResponse response) throws IOException {
				return response.getStatusCode().value();
			}

			@Override
			public void discard(ClientHttpResponse response) {
				response.close();
			}

			@Override
			public HeaderLookup headers(ClientHttpResponse response) {
				return response.getHeaders()::getFirst;
			}

			@Override
			public ClientHttpResponse readHead(ClientHttpResponse response, StreamHead head) throws IOException {
				return new Headed(response, head.readFrom(response.getBody()));
			}

			@Override
			public byte[] readRefusal(ClientHttpResponse response) throws IOException {
				try (response; InputStream in = response.getBody()) {
					return in.readNBytes(LlmQuotaCalls.MAX_REFUSAL_BYTES);
				}
			}

			@Override
			public ClientHttpResponse follow(ClientHttpResponse response, GovernedCall call) {
				return new Followed(response, call);
			}

			@Override
			public ClientHttpResponse passOn(ClientHttpResponse response, byte[] refusal, boolean decided) {
				try {
					HttpHeaders headers = new HttpHeaders();
					headers.addAll(response.getHeaders());
					if (decided) {
						// as on every stack: a client that retries by itself must not
						// run llm-quota's attempts again (Spring AI's error handler
						// reads it)
						headers.set(Waits.SHOULD_RETRY, "false");
					}
					return new Buffered(response.getStatusCode(), response.getStatusText(), headers, refusal);
				}
				catch (IOException ex) {
					throw new UncheckedIOException(ex);
				}
			}

		});
	}

	/**
	 * The request of one attempt: the entry's credentials, the body's length if llm-quota
	 * changed it; a route's attempt goes to its target's URL with headers of its own, so
	 * one target's credentials never reach another.
	 */
	private static HttpRequest attempt(HttpRequest request, byte[] body, CallPlan attempt) {
		if (!attempt.routed()) {
			attempt.entry().credentials().applyTo(request.getHeaders()::set);
			if (attempt.body() != body) {
				request.getHeaders().setContentLength(attempt.body().length);
			}
			return request;
		}
		HttpHeaders headers = new HttpHeaders();
		headers.addAll(request.getHeaders());
		attempt.entry().credentials().droppedOnRoutes().forEach(headers::remove);
		attempt.entry().credentials().applyTo(headers::set);
		headers.setContentLength(attempt.body().length);
		return new HttpRequestWrapper(request) {

			@Override
			public URI getURI() {
				return attempt.uri();
			}

			@Override
			public HttpHeaders getHeaders() {
				return headers;
			}

		};
	}

	/** The answer, its body read on its way to the caller. */
	private static final class Followed implements ClientHttpResponse {

		private final ClientHttpResponse response;

		private final GovernedCall call;

		private InputStream body;

		Followed(ClientHttpResponse response, GovernedCall call) {
			this.response = response;
			this.call = call;
		}

		@Override
		public HttpStatusCode getStatusCode() throws IOException {
			return this.response.getStatusCode();
		}

		@Override
		public String getStatusText() throws IOException {
			return this.response.getStatusText();
		}

		@Override
		public HttpHeaders getHeaders() {
			return this.response.getHeaders();
		}

		@Override
		public synchronized InputStream getBody() throws IOException {
			if (this.body == null) {
				this.body = new FollowingInputStream(this.response.getBody(), this.call,
						this.response.getHeaders().getContentLength());
			}
			return this.body;
		}

		@Override
		public void close() {
			try {
				if (this.body != null) {
					this.body.close();
				}
			}
			catch (IOException ex) {
				// the response is closed below either way
			}
			finally {
				this.response.close();
				// never read, or closed before its end: the call ends with what was read
				this.call.onAbort();
			}
		}

	}

	/** An answer whose stream's head was read: the head, then the rest of the stream. */
	private static final class Headed implements ClientHttpResponse {

		private final ClientHttpResponse response;

		private final InputStream body;

		Headed(ClientHttpResponse response, InputStream body) {
			this.response = response;
			this.body = body;
		}

		@Override
		public HttpStatusCode getStatusCode() throws IOException {
			return this.response.getStatusCode();
		}

		@Override
		public String getStatusText() throws IOException {
			return this.response.getStatusText();
		}

		@Override
		public HttpHeaders getHeaders() {
			return this.response.getHeaders();
		}

		@Override
		public InputStream getBody() {
			return this.body;
		}

		@Override
		public void close() {
			this.response.close();
		}

	}

	/** A refusal read whole, handed on byte for byte. */
	private static final class Buffered implements ClientHttpResponse {

		private final HttpStatusCode status;

		private final String statusText;

		private final HttpHeaders headers;

		private final byte[] body;

		Buffered(HttpStatusCode status, String statusText, HttpHeaders headers, byte[] body) {
			this.status = status;
			this.statusText = statusText;
			this.headers = headers;
			this.body = body;
		}

		@Override
		public HttpStatusCode getStatusCode() {
			return this.status;
		}

		@Override
		public String getStatusText() {
			return this.statusText;
		}

		@Override
		public HttpHeaders getHeaders() {
			return this.headers;
		}

		@Override
		public InputStream getBody() {
			return new ByteArrayInputStream(this.body);
		}

		@Override
		public void close() {
		}

	}

}
