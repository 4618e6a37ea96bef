package dev.llmquota.client.webclient;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;

import dev.llmquota.LlmQuota;
import dev.llmquota.client.CallPlan;
import dev.llmquota.client.Credentials;
import dev.llmquota.client.GovernedCall;
import dev.llmquota.client.LlmQuotaCalls;
import dev.llmquota.client.Outcome;
import dev.llmquota.client.ProviderEntry;
import dev.llmquota.client.RetryPolicy;
import dev.llmquota.client.StreamHead;
import dev.llmquota.provider.HeaderLookup;
import dev.llmquota.provider.Waits;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.codec.HttpMessageWriter;
import org.springframework.web.reactive.function.BodyExtractors;
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
		if (request instanceof ReplayedRequest || request.attributes().containsKey(GOVERNED)) {
			return next.exchange(request);
		}
		// an attribute on the request wins; else a Reactor context or a scope
		// on this thread
		Map<String, Object> own = request.attributes();
		return Mono.deferContextual((context) -> governed(request, next, (name) -> {
			Object value = own.get(name);
			return (value != null) ? value : LlmQuota.current(context, name);
		}));
	}

	private Mono<ClientResponse> governed(ClientRequest request, ExchangeFunction next,
			Function<String, Object> attributes) {
		ProviderEntry entry = this.calls.entry(request.method().name(), request.url(), request.headers()::getFirst,
				attributes);
		if (entry == null) {
			return next.exchange(request);
		}
		return CapturedBody.of(request, this.writers.get()).flatMap((captured) -> {
			CallPlan plan = this.calls.plan(entry, request.url(), captured.bytes(), attributes);
			// a route's attempts each go where admission chose: their request
			// is made then
			ClientRequest replay = plan.routed() ? null : replay(request, captured, plan);
			long deadline = this.calls.deadline(plan, null);
			// Every attempt goes through admission again and reserves again.
			return this.calls.retryPolicy()
				.reactive(plan, (number) -> attempt(next, request, captured, replay, plan, number, deadline));
		});
	}

	private Mono<ClientResponse> attempt(ExchangeFunction next, ClientRequest request, CapturedBody captured,
			ClientRequest replay, CallPlan plan, int attempt, long deadline) {
		// every attempt waits within what is left of the call's one deadline
		return Mono.defer(() -> {
			AtomicReference<GovernedCall> unanswered = new AtomicReference<>();
			return this.calls.admit(plan, deadline).flatMap((permit) -> {
				GovernedCall call = this.calls.start(plan, permit);
				unanswered.set(call);
				return next.exchange((replay != null) ? replay : replay(request, captured, call.plan()))
					.doOnError((ex) -> call.onNoResponse())
					.doOnCancel(call::onCancel)
					.flatMap((response) -> answered(response, call, attempt, deadline));
			})
				.doOnNext((response) -> unanswered.set(null))
				// a caller gone before the attempt answered ends its call here too:
				// seen once in thousands of cancels racing the answer, the cancel did not
				// reach the operators inside, and the slot stayed held to the lease
				.doOnCancel(() -> {
					GovernedCall call = unanswered.getAndSet(null);
					if (call != null) {
						call.onCancel();
					}
				});
		});
	}

	private Mono<ClientResponse> answered(ClientResponse response, GovernedCall call, int attempt, long deadline) {
		int status = response.statusCode().value();
		StreamHead head = this.calls.head(call.plan(), status);
		if (head != null) {
			return held(response, call, head, attempt, deadline);
		}
		if (status < 400) {
			return Mono.just(follow(response, call));
		}
		call.onResponse(status, response.headers().asHttpHeaders()::getFirst);
		// A refusal is small: read it (up to the bound, as the blocking clients do) to
		// classify it, then hand the same bytes on. The penalty or exhaustion is in the
		// books before the attempt's slots go back: no waiting caller slips in between.
		return DataBufferUtils
			.join(DataBufferUtils.takeUntilByteCount(response.body(BodyExtractors.toDataBuffers()),
					LlmQuotaCalls.MAX_REFUSAL_BYTES))
			.map((buffer) -> {
				byte[] bytes = new byte[buffer.readableByteCount()];
				buffer.read(bytes);
				DataBufferUtils.release(buffer);
				return bytes;
			})
			.defaultIfEmpty(new byte[0])
			.onErrorMap(Unread::new)
			.doOnCancel(call::onAbort)
			.flatMap((bytes) -> {
				Outcome outcome;
				try {
					outcome = this.calls.answered(call, status, response.headers().asHttpHeaders()::getFirst, bytes,
							attempt, deadline);
				}
				finally {
					call.onBody(ByteBuffer.wrap(bytes));
					call.onComplete();
				}
				return switch (outcome.action()) {
					case RETRY -> Mono.error(RetryPolicy.RetryAfter.of(outcome));
					case FAIL -> Mono.error(outcome.failure());
					// the bytes read stand in for the body, not subscribed again
					case PASS -> Mono.just(passOn(response, call,
							Flux.defer(() -> Flux.just(DefaultDataBufferFactory.sharedInstance.wrap(bytes)))));
				};
			})
			.onErrorResume(Unread.class, (unread) -> {
				RuntimeException failure = this.calls.unreadRefusal(call, status,
						response.headers().asHttpHeaders()::getFirst, attempt, deadline);
				if (failure == null && call.plan().enforced()) {
					// its status and headers, marked, rather than an error a client's
					// own retry would retry
					return Mono.just(passOn(response, call, Flux.empty()));
				}
				return Mono.error((failure != null) ? failure : unread.getCause());
			});
	}

	/**
	 * A refusal's body that could not be read, told apart from what its reading decided.
	 */
	private static final class Unread extends RuntimeException {

		Unread(Throwable cause) {
			super(cause.getMessage(), cause, false, false);
		}

	}

	/**
	 * A refusal handed on with the body given: marked not to be retried again where
	 * llm-quota decided, as on every stack, so a client's own retry does not run its
	 * attempts again; in shadow mode as it came.
	 */
	private static ClientResponse passOn(ClientResponse response, GovernedCall call, Flux<DataBuffer> body) {
		ClientResponse.Builder passed = response.mutate().body((ignored) -> body);
		return call.plan().enforced() ? passed.headers((headers) -> headers.set(Waits.SHOULD_RETRY, "false")).build()
				: passed.build();
	}

	/**
	 * A stream that may refuse its call after a 200: held back until its head tells; a
	 * refusal is then handled like a 429, and the caller never sees this attempt.
	 */
	private Mono<ClientResponse> held(ClientResponse response, GovernedCall call, StreamHead head, int attempt,
			long deadline) {
		HeaderLookup headers = response.headers().asHttpHeaders()::getFirst;
		call.onResponse(response.statusCode().value(), headers);
		return HeldStream.read(response.body(BodyExtractors.toDataBuffers()), head)
			.doOnError((ex) -> call.onAbort())
			.doOnCancel(call::onAbort)
			.flatMap((body) -> {
				if (head.refusal() == null) {
					return Mono.just(followed(response.mutate().body((ignored) -> body).build(), call));
				}
				Outcome outcome = this.calls.refusedInStream(call, head, headers, attempt, deadline);
				if (outcome.action() == Outcome.Action.PASS) {
					return Mono.just(passOn(response, call, body));
				}
				// the refused stream ends soon after its refusal: drain it, give its
				// buffers back
				body.subscribe(DataBufferUtils::release, (ex) -> {
				});
				return Mono.error((outcome.action() == Outcome.Action.RETRY) ? RetryPolicy.RetryAfter.of(outcome)
						: outcome.failure());
			});
	}

	private static ClientResponse follow(ClientResponse response, GovernedCall call) {
		call.onResponse(response.statusCode().value(), response.headers().asHttpHeaders()::getFirst);
		return followed(response, call);
	}

	/**
	 * The answer, its body read on its way to the caller: one operator for its buffers
	 * and its end, one for a cancel.
	 */
	private static ClientResponse followed(ClientResponse response, GovernedCall call) {
		return response.mutate().body((body) -> body.doOnEach((signal) -> {
			if (signal.isOnNext()) {
				peek(signal.get(), call);
			}
			else if (signal.isOnComplete()) {
				call.onComplete();
			}
			else if (signal.isOnError()) {
				call.onAbort();
			}
		}).doOnCancel(call::onAbort)).build();
	}

	private static void peek(DataBuffer buffer, GovernedCall call) {
		try (DataBuffer.ByteBufferIterator iterator = buffer.readableByteBuffers()) {
			while (iterator.hasNext()) {
				ByteBuffer view = iterator.next();
				call.onBody(view);
			}
		}
	}

	/**
	 * The request as the plan sends it: its URL, its body, its entry's credentials. A
	 * call's one request takes the captured headers as they are; a route's attempts each
	 * take a copy, for their target's credentials.
	 */
	private static ClientRequest replay(ClientRequest request, CapturedBody captured, CallPlan plan) {
		HttpHeaders headers = captured.headers();
		Credentials credentials = plan.entry().credentials();
		if (plan.routed()) {
			headers = new HttpHeaders();
			headers.putAll(captured.headers());
			credentials.droppedOnRoutes().forEach(headers::remove);
		}
		credentials.applyTo(headers::set);
		return new ReplayedRequest(request, plan.uri(), headers, plan.body());
	}

}
