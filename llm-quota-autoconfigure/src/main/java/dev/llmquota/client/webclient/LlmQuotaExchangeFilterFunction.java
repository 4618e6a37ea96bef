package dev.llmquota.client.webclient;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.function.Supplier;

import dev.llmquota.client.CallPlan;
import dev.llmquota.client.GovernedCall;
import dev.llmquota.client.LlmQuotaCalls;
import dev.llmquota.client.Route;
import dev.llmquota.core.QuotaPermit;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.codec.HttpMessageWriter;
import org.springframework.web.reactive.function.BodyInserter;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import org.springframework.web.reactive.function.client.ExchangeStrategies;

/**
 * Governs a {@code WebClient}'s calls to LLM providers: a call whose URL starts with a
 * provider entry's {@code base-url} is written once with the client's codecs, waits for
 * admission without holding a connection, is sent byte for byte as written, and is
 * followed until its body ends. Other calls pass through untouched.
 */
public final class LlmQuotaExchangeFilterFunction implements ExchangeFilterFunction {

	private final LlmQuotaCalls calls;

	private final Supplier<List<HttpMessageWriter<?>>> writers;

	/**
	 * Creates a filter that writes bodies with WebFlux's default codecs; use it on a
	 * {@code WebClient.Builder} built by hand.
	 * @param calls the calls facade
	 */
	public LlmQuotaExchangeFilterFunction(LlmQuotaCalls calls) {
		this(calls, ExchangeStrategies.withDefaults()::messageWriters);
	}

	/**
	 * Creates a filter that writes bodies with the given codecs.
	 * @param calls the calls facade
	 * @param writers the codecs of the builder the filter is added to
	 */
	public LlmQuotaExchangeFilterFunction(LlmQuotaCalls calls, Supplier<List<HttpMessageWriter<?>>> writers) {
		this.calls = calls;
		this.writers = writers;
	}

	/**
	 * Marks a request this filter already governs, so a second copy of it passes it on.
	 */
	static final String GOVERNED = LlmQuotaExchangeFilterFunction.class.getName() + ".GOVERNED";

	@Override
	public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
		if (request.attribute(GOVERNED).isPresent()) {
			return next.exchange(request);
		}
		Route route = this.calls.route(request.method().name(), request.url(), request.headers()::getFirst,
				(name) -> request.attribute(name).orElse(null));
		if (route == null) {
			return next.exchange(request);
		}
		return CapturedBody.of(request, this.writers.get()).flatMap((captured) -> {
			CallPlan plan = this.calls.plan(route, request.url(), captured.bytes(),
					(name) -> request.attribute(name).orElse(null));
			ClientRequest replay = replay(request, captured, plan.body());
			return this.calls.admit(plan).flatMap((permit) -> exchange(next, replay, plan, permit));
		});
	}

	private Mono<ClientResponse> exchange(ExchangeFunction next, ClientRequest request, CallPlan plan,
			QuotaPermit permit) {
		GovernedCall call = this.calls.start(plan, permit);
		return next.exchange(request)
			.doOnError((ex) -> call.onNoResponse())
			.doOnCancel(call::onNoResponse)
			.map((response) -> follow(response, call));
	}

	private static ClientResponse follow(ClientResponse response, GovernedCall call) {
		call.onResponse(response.statusCode().value(), response.headers().asHttpHeaders()::getFirst);
		return response.mutate()
			.body((body) -> body.doOnNext((buffer) -> peek(buffer, call))
				.doOnComplete(call::onComplete)
				.doOnError((ex) -> call.onAbort())
				.doOnCancel(call::onAbort))
			.build();
	}

	private static void peek(DataBuffer buffer, GovernedCall call) {
		try (DataBuffer.ByteBufferIterator iterator = buffer.readableByteBuffers()) {
			while (iterator.hasNext()) {
				ByteBuffer view = iterator.next();
				call.onBody(view);
			}
		}
	}

	private static ClientRequest replay(ClientRequest request, CapturedBody captured, byte[] bytes) {
		BodyInserter<byte[], org.springframework.http.client.reactive.ClientHttpRequest> inserter = (message,
				context) -> {
			message.getHeaders().setContentLength(bytes.length);
			return message.writeWith(Mono.fromSupplier(() -> message.bufferFactory().wrap(bytes)));
		};
		return ClientRequest.from(request).headers((headers) -> {
			headers.clear();
			headers.putAll(captured.headers());
			headers.setContentLength(bytes.length);
		}).attribute(GOVERNED, Boolean.TRUE).body(inserter).build();
	}

}
