package dev.llmquota.client.httpcomponents;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;

import dev.llmquota.client.LlmQuotaCalls;
import org.apache.hc.client5.http.HttpRequestRetryStrategy;
import org.apache.hc.client5.http.impl.DefaultHttpRequestRetryStrategy;
import org.apache.hc.client5.http.protocol.HttpClientContext;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.protocol.HttpContext;
import org.apache.hc.core5.util.TimeValue;

/**
 * Apache HttpClient's retry strategy with governed calls left to llm-quota: by default
 * HttpClient 5 retries a 429 or a 503 itself, below every Spring interceptor and filter,
 * so each of llm-quota's attempts would reach the provider twice, uncounted. Answers to
 * governed calls are never retried here (llm-quota decides, through admission); every
 * other request keeps HttpClient's default behaviour. (The async client behind
 * WebClient's HttpComponents connector never retries a governed call: its body is a
 * stream it cannot send twice.)
 */
public final class LlmQuotaRetryStrategy implements HttpRequestRetryStrategy {

	private final LlmQuotaCalls calls;

	private final HttpRequestRetryStrategy delegate;

	/**
	 * Creates the strategy over HttpClient's default one.
	 * @param calls the call support that knows which calls are governed
	 */
	public LlmQuotaRetryStrategy(LlmQuotaCalls calls) {
		this(calls, DefaultHttpRequestRetryStrategy.INSTANCE);
	}

	/**
	 * Creates the strategy over another one, which decides for calls that are not
	 * governed.
	 * @param calls the call support that knows which calls are governed
	 * @param delegate the strategy for calls llm-quota does not govern
	 */
	public LlmQuotaRetryStrategy(LlmQuotaCalls calls, HttpRequestRetryStrategy delegate) {
		this.calls = calls;
		this.delegate = delegate;
	}

	@Override
	public boolean retryRequest(HttpRequest request, IOException exception, int execCount, HttpContext context) {
		// a governed call is a POST, which HttpClient never resends after an I/O failure
		return !governed(request) && this.delegate.retryRequest(request, exception, execCount, context);
	}

	@Override
	public boolean retryRequest(HttpResponse response, int execCount, HttpContext context) {
		return !governed(HttpClientContext.castOrCreate(context).getRequest())
				&& this.delegate.retryRequest(response, execCount, context);
	}

	@Override
	public TimeValue getRetryInterval(HttpRequest request, IOException exception, int execCount, HttpContext context) {
		return this.delegate.getRetryInterval(request, exception, execCount, context);
	}

	@Override
	public TimeValue getRetryInterval(HttpResponse response, int execCount, HttpContext context) {
		return this.delegate.getRetryInterval(response, execCount, context);
	}

	private boolean governed(HttpRequest request) {
		if (LlmQuotaCalls.sendingAttempt()) {
			// an attempt of llm-quota's own, however the call was told governed
			return true;
		}
		if (request == null) {
			// nothing to tell the call by: llm-quota's own retry is the safe one
			return true;
		}
		URI uri;
		try {
			uri = request.getUri();
		}
		catch (URISyntaxException ex) {
			return true;
		}
		return this.calls.entry(request.getMethod(), uri, (name) -> {
			Header header = request.getFirstHeader(name);
			return (header != null) ? header.getValue() : null;
		}, (attribute) -> null) != null;
	}

}
