package dev.llmquota.client.webclient;

import java.net.URI;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

import reactor.core.publisher.Mono;

import org.springframework.http.HttpCookie;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.reactive.ClientHttpRequest;
import org.springframework.util.MultiValueMap;
import org.springframework.web.reactive.function.BodyInserter;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ExchangeStrategies;

/**
 * The caller's request as an attempt sends it: its URL, the headers the codecs wrote
 * (with the entry's credentials) and the body's bytes as written once; the rest (method,
 * cookies, the HTTP request's customizer, log prefix) is the caller's request's own, read
 * through rather than copied as {@code ClientRequest.from} would. It writes itself as
 * Spring's own requests do: headers, cookies, attributes, the customizer, then the body.
 * Its attributes are the caller's with {@link LlmQuotaExchangeFilterFunction#GOVERNED}
 * set, copied only when asked for: a copy of it made by a filter downstream passes a
 * second llm-quota filter by that mark; the request itself, by its type.
 */
final class ReplayedRequest implements ClientRequest {

	private final ClientRequest request;

	private final URI url;

	private final HttpHeaders headers;

	private final byte[] bytes;

	/** The caller's attributes and the mark, once asked for. */
	private Map<String, Object> attributes;

	/**
	 * Creates the attempt's request.
	 * @param request the caller's request
	 * @param url where it goes
	 * @param headers its headers, the attempt's own: the body's length is set here
	 * @param bytes the body
	 */
	ReplayedRequest(ClientRequest request, URI url, HttpHeaders headers, byte[] bytes) {
		this.request = request;
		this.url = url;
		this.headers = headers;
		this.bytes = bytes;
		// the codecs set it for the body they wrote; a rewritten body has its own
		if (this.headers.getContentLength() != bytes.length) {
			this.headers.setContentLength(bytes.length);
		}
	}

	@Override
	public HttpMethod method() {
		return this.request.method();
	}

	@Override
	public URI url() {
		return this.url;
	}

	@Override
	public HttpHeaders headers() {
		return this.headers;
	}

	@Override
	public MultiValueMap<String, String> cookies() {
		return this.request.cookies();
	}

	@Override
	public BodyInserter<?, ? super ClientHttpRequest> body() {
		return (message, context) -> write(message);
	}

	@Override
	public Map<String, Object> attributes() {
		if (this.attributes == null) {
			Map<String, Object> attributes = new HashMap<>(this.request.attributes());
			attributes.put(LlmQuotaExchangeFilterFunction.GOVERNED, Boolean.TRUE);
			this.attributes = attributes;
		}
		return this.attributes;
	}

	@Override
	public Consumer<ClientHttpRequest> httpRequest() {
		return this.request.httpRequest();
	}

	@Override
	public String logPrefix() {
		return this.request.logPrefix();
	}

	@Override
	public Mono<Void> writeTo(ClientHttpRequest request, ExchangeStrategies strategies) {
		HttpHeaders sent = request.getHeaders();
		this.headers.forEach(sent::put);
		MultiValueMap<String, String> cookies = cookies();
		if (!cookies.isEmpty()) {
			MultiValueMap<String, HttpCookie> sentCookies = request.getCookies();
			cookies.forEach(
					(name, values) -> values.forEach((value) -> sentCookies.add(name, new HttpCookie(name, value))));
		}
		// the caller's, with the mark, or what a filter after this one made of them
		Map<String, Object> attributes = request.getAttributes();
		attributes.putAll((this.attributes != null) ? this.attributes : this.request.attributes());
		attributes.put(LlmQuotaExchangeFilterFunction.GOVERNED, Boolean.TRUE);
		Consumer<ClientHttpRequest> customizer = httpRequest();
		if (customizer != null) {
			customizer.accept(request);
		}
		return write(request);
	}

	private Mono<Void> write(ClientHttpRequest message) {
		return message.writeWith(Mono.fromSupplier(() -> message.bufferFactory().wrap(this.bytes)));
	}

}
