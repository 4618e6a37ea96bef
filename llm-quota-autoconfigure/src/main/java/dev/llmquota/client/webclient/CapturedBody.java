package dev.llmquota.client.webclient;

import java.net.URI;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferFactory;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpCookie;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.reactive.ClientHttpRequest;
import org.springframework.http.codec.HttpMessageWriter;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.util.MultiValueMap;
import org.springframework.web.reactive.function.BodyInserter;
import org.springframework.web.reactive.function.client.ClientRequest;

/**
 * A request body written once by the caller's own codecs, as bytes, with the headers the
 * codecs set (content type and length): what llm-quota reads before admission and sends,
 * unchanged, after it.
 *
 * @param bytes the body
 * @param headers the request's headers after the codecs wrote
 */
record CapturedBody(byte[] bytes, HttpHeaders headers) {

	/**
	 * Writes a request's body with the given writers, without sending anything.
	 * @param request the request
	 * @param writers the codecs of the builder that made the request
	 * @return the body and headers
	 */
	static Mono<CapturedBody> of(ClientRequest request, List<HttpMessageWriter<?>> writers) {
		Sink sink = new Sink(request);
		BodyInserter.Context context = new BodyInserter.Context() {

			@Override
			public List<HttpMessageWriter<?>> messageWriters() {
				return writers;
			}

			@Override
			public Optional<ServerHttpRequest> serverRequest() {
				return Optional.empty();
			}

			@Override
			public Map<String, Object> hints() {
				return Map.of();
			}

		};
		return request.body()
			.insert(sink, context)
			.then(Mono.fromSupplier(() -> new CapturedBody(sink.bytes, sink.headers)));
	}

	/** An output message that keeps what is written to it. */
	private static final class Sink implements ClientHttpRequest {

		private static final byte[] NO_BYTES = {};

		private final ClientRequest request;

		private final HttpHeaders headers;

		private final Map<String, Object> attributes = new HashMap<>();

		private byte[] bytes = NO_BYTES;

		Sink(ClientRequest request) {
			this.request = request;
			// copied by name, not through HttpHeaders' case-insensitive entry set
			this.headers = HttpHeaders.copyOf(request.headers());
		}

		@Override
		public HttpMethod getMethod() {
			return this.request.method();
		}

		@Override
		public URI getURI() {
			return this.request.url();
		}

		@Override
		public MultiValueMap<String, HttpCookie> getCookies() {
			return new LinkedMultiValueMap<>();
		}

		@Override
		public Map<String, Object> getAttributes() {
			return this.attributes;
		}

		@Override
		public <T> T getNativeRequest() {
			throw new IllegalStateException("No native request while llm-quota reads the body");
		}

		@Override
		public HttpHeaders getHeaders() {
			return this.headers;
		}

		@Override
		public DataBufferFactory bufferFactory() {
			return DefaultDataBufferFactory.sharedInstance;
		}

		@Override
		public void beforeCommit(Supplier<? extends Mono<Void>> action) {
		}

		@Override
		public boolean isCommitted() {
			return false;
		}

		@Override
		public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
			return DataBufferUtils.join(body).doOnNext((joined) -> {
				this.bytes = bytes(joined);
				DataBufferUtils.release(joined);
			}).then();
		}

		/**
		 * The body's bytes: the array of a heap buffer that holds exactly them (what the
		 * codecs write one value into, from this sink's buffer factory, which pools
		 * nothing), else a copy.
		 */
		private static byte[] bytes(DataBuffer joined) {
			if (joined instanceof DefaultDataBuffer heap) {
				ByteBuffer buffer = heap.getNativeBuffer();
				if (buffer.hasArray() && buffer.arrayOffset() == 0 && heap.readPosition() == 0
						&& heap.readableByteCount() == buffer.array().length) {
					return buffer.array();
				}
			}
			byte[] copy = new byte[joined.readableByteCount()];
			joined.read(copy);
			return copy;
		}

		@Override
		public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
			return writeWith(Flux.from(body).concatMap(Flux::from));
		}

		@Override
		public Mono<Void> setComplete() {
			return Mono.empty();
		}

	}

}
