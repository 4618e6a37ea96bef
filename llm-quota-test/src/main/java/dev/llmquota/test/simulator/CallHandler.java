package dev.llmquota.test.simulator;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.llmquota.test.simulator.RequestRecord.Outcome;
import dev.llmquota.test.simulator.clock.SimClock;
import dev.llmquota.test.simulator.dialect.BadRequestException;
import dev.llmquota.test.simulator.dialect.CallRequest;
import dev.llmquota.test.simulator.dialect.Completion;
import dev.llmquota.test.simulator.dialect.Dialect;
import dev.llmquota.test.simulator.dialect.StreamingDialect;
import dev.llmquota.test.simulator.dialect.Json;
import dev.llmquota.test.simulator.dialect.Reply;
import dev.llmquota.test.simulator.dialect.Route;
import dev.llmquota.test.simulator.quota.Admission;
import dev.llmquota.test.simulator.quota.Dimension;
import dev.llmquota.test.simulator.quota.OutputPolicy;
import dev.llmquota.test.simulator.quota.QuotaBook;
import dev.llmquota.test.simulator.quota.Refusal;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.QueryStringDecoder;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Serves one HTTP exchange: route to a dialect, read, admit on the books, then answer,
 * refuse or fail, and log the outcome.
 */
final class CallHandler {

	/** Generated answers are at most this long, whatever their ceiling. */
	private static final int MAX_OUTPUT_TOKENS = 32_768;

	private static final int MAX_DELTA_FRAMES = 16;

	private final SimulatorState state;

	CallHandler(SimulatorState state) {
		this.state = state;
	}

	Mono<Void> handle(HttpServerRequest request, HttpServerResponse response) {
		SimClock clock = this.state.clock();
		Arrival arrival = new Arrival(clock.instant(), clock.nanoTime());
		QueryStringDecoder uri = new QueryStringDecoder(request.uri());
		Map<String, String> query = new LinkedHashMap<>();
		uri.parameters().forEach((name, values) -> query.put(name, values.isEmpty() ? "" : values.get(0)));
		for (Dialect dialect : this.state.dialects()) {
			Route route;
			try {
				route = dialect.route(uri.rawPath(), query);
			}
			catch (BadRequestException ex) {
				return send(response, dialect.badRequest(ex.getMessage(), "-"));
			}
			if (route != null) {
				if (!HttpMethod.POST.equals(request.method())) {
					return send(response, dialect.badRequest("Only POST is served on " + uri.path(), "-"));
				}
				for (Map.Entry<String, String> required : this.state.requiredHeaders().entrySet()) {
					if (!required.getValue().equals(request.requestHeaders().get(required.getKey()))) {
						ObjectNode unauthorized = Json.object();
						unauthorized.putObject("error")
							.put("message", "Incorrect or missing " + required.getKey())
							.put("type", "authentication_error");
						return request.receive()
							.then(send(response, Reply.json(401, Map.of(), Json.write(unauthorized))));
					}
				}
				return request.receive()
					.aggregate()
					.asByteArray()
					.defaultIfEmpty(new byte[0])
					.flatMap((body) -> serve(dialect, route, body, arrival, response));
			}
		}
		ObjectNode notFound = Json.object();
		notFound.putObject("error")
			.put("message", "No simulated provider serves " + request.method() + " " + uri.path());
		return send(response, Reply.json(404, Map.of(), Json.write(notFound)));
	}

	private Mono<Void> serve(Dialect dialect, Route route, byte[] body, Arrival arrival, HttpServerResponse response) {
		String requestId = dialect.newRequestId();
		CallRequest call;
		try {
			JsonNode json = Json.MAPPER.readTree(body);
			if (json == null || !json.isObject()) {
				throw new BadRequestException("The request body must be a JSON object.");
			}
			call = dialect.read(route, json);
		}
		catch (JacksonException ex) {
			return reject(dialect, route, "Could not parse the JSON body of your request: " + ex.getOriginalMessage(),
					requestId, arrival, response);
		}
		catch (BadRequestException ex) {
			return reject(dialect, route, ex.getMessage(), requestId, arrival, response);
		}
		Fault fault = this.state.faults().draw();
		Instant now = this.state.clock().instant();
		if (this.state.exhausted()) {
			Reply reply = dialect.exhausted(call, requestId, now);
			log(arrival, dialect, call, 0, 0, reply.status(), Outcome.EXHAUSTED, true, null, fault);
			return send(response, reply);
		}
		if (fault == Fault.SERVER_ERROR || fault == Fault.OVERLOADED) {
			Reply reply = dialect.serverError(fault == Fault.OVERLOADED, requestId);
			log(arrival, dialect, call, 0, 0, reply.status(), Outcome.FAILED, false, null, fault);
			return send(response, reply);
		}
		if (fault == Fault.RATE_LIMITED) {
			Refusal refusal = new Refusal(Dimension.REQUESTS_PER_MINUTE, call.model(), 1, 1, 1,
					this.state.faults().rateLimitWait());
			if (dialect.chargesRefusedRequests()) {
				// a 429 is a 429 to the provider's books, whatever caused it
				this.state.book().chargeRefused(call.model());
			}
			Reply reply = dialect.refusal(call, refusal, Map.of(), requestId, now);
			log(arrival, dialect, call, 0, 0, reply.status(), Outcome.REFUSED, true, Dimension.REQUESTS_PER_MINUTE,
					fault);
			return send(response, reply);
		}
		OutputPolicy policy = this.state.outputPolicy(dialect);
		QuotaBook book = this.state.book();
		boolean enforce = this.state.enforce();
		boolean charged = dialect.chargesRefusedRequests();
		Mono<Answer> admitted = Mono.fromSupplier(() -> new Answer(dialect, call, requestId, arrival, fault,
				call.operation().generatesOutput()
						? book.admit(call.model(), call.inputTokens(), call.maxTokens(), policy, enforce, charged)
						: book.admitInput(call.model(), call.inputTokens(), enforce, charged)));
		// complete, error or cancel: every path after admission settles and releases
		return Mono.usingWhen(admitted, (answer) -> respond(answer, now, response), this::finishing,
				(answer, error) -> finishing(answer), this::finishing);
	}

	private Mono<Void> respond(Answer answer, Instant now, HttpServerResponse response) {
		Dialect dialect = answer.dialect;
		CallRequest call = answer.call;
		Admission admission = answer.admission;
		if (!admission.admitted()) {
			Reply reply = dialect.refusal(call, admission.violation(), admission.states(), answer.requestId, now);
			log(answer.arrival, dialect, call, admission.maxTokens(), 0, reply.status(), Outcome.REFUSED, true,
					admission.violation().dimension(), answer.fault);
			return send(response, withFault(reply, dialect, answer.fault));
		}
		Map<String, String> headers = new LinkedHashMap<>(
				dialect.successHeaders(call, answer.requestId, admission.states(), now));
		if (answer.fault == Fault.GARBAGE_HEADERS) {
			headers.putAll(dialect.garbageHeaders());
		}
		answer.completion = completion(answer);
		Mono<Void> delay = (answer.fault == Fault.DELAY_HEADERS)
				? this.state.clock()
					.awaitNanos(this.state.clock().nanoTime() + this.state.faults().headerDelay().toNanos())
				: Mono.empty();
		return delay.then(Mono.defer(() -> (call.stream() && dialect instanceof StreamingDialect streaming)
				? stream(answer, streaming, headers, response) : whole(answer, headers, response)));
	}

	private Completion completion(Answer answer) {
		LatencyModel latency = this.state.latency();
		int output = answer.call.operation().generatesOutput()
				? (int) Math.min(MAX_OUTPUT_TOKENS, latency.outputTokens(answer.admission.maxTokens())) : 0;
		List<String> tokens = new ArrayList<>(output);
		for (int i = 0; i < output; i++) {
			tokens.add(SimulatedText.token(i));
		}
		long millis = latency.timeToFirstToken().plus(latency.perOutputToken().multipliedBy(output)).toMillis();
		return new Completion(answer.requestId, answer.dialect.newMessageId(answer.call), answer.call.model(),
				answer.arrival.wall().getEpochSecond(), answer.call.inputTokens(), output, List.copyOf(tokens),
				latency.timeToFirstToken().toMillis(), millis);
	}

	private Mono<Void> whole(Answer answer, Map<String, String> headers, HttpServerResponse response) {
		LatencyModel latency = this.state.latency();
		long done = answer.arrival.nanos() + latency.timeToFirstToken().toNanos()
				+ latency.perOutputToken().toNanos() * answer.completion.outputTokens();
		return this.state.clock().awaitNanos(done).then(Mono.defer(() -> {
			// the answer was generated in full before it is sent, dropped or not
			answer.sent = answer.completion.outputTokens();
			headers.putAll(answer.dialect.completionHeaders(answer.call, answer.completion));
			Reply reply = Reply.json(200, headers, answer.dialect.completionBody(answer.call, answer.completion));
			if (answer.fault == Fault.DROP_MID_STREAM) {
				return sendHalfAndDrop(response, reply);
			}
			settleBeforeTheLastByte(answer);
			return send(response, reply);
		}));
	}

	/**
	 * Settles, frees and logs the call as its last frame goes out, so a client that read
	 * the whole answer finds its slot and refund free and the call in the log. The answer
	 * was generated in full by then: a connection lost on the last bytes does not make it
	 * a dropped call.
	 */
	private void settleBeforeTheLastByte(Answer answer) {
		answer.complete = true;
		finish(answer);
	}

	private Mono<Void> stream(Answer answer, StreamingDialect dialect, Map<String, String> headers,
			HttpServerResponse response) {
		response.status(200);
		headers.forEach(response::header);
		response.header("content-type", dialect.streamContentType());
		response.header("cache-control", "no-cache");
		List<String> tokens = answer.completion.tokens();
		int perFrame = Math.max(1, (tokens.size() + MAX_DELTA_FRAMES - 1) / MAX_DELTA_FRAMES);
		LatencyModel latency = this.state.latency();
		long first = answer.arrival.nanos() + latency.timeToFirstToken().toNanos();
		long perToken = latency.perOutputToken().toNanos();
		List<Frame> frames = new ArrayList<>();
		dialect.streamHead(answer.call, answer.completion).forEach((bytes) -> frames.add(new Frame(first, bytes, 0)));
		for (int start = 0; start < tokens.size(); start += perFrame) {
			int end = Math.min(tokens.size(), start + perFrame);
			String text = String.join("", tokens.subList(start, end));
			frames.add(new Frame(first + perToken * end,
					dialect.streamDelta(answer.call, answer.completion, frames.size(), text), end - start));
		}
		long last = first + perToken * tokens.size();
		dialect.streamTail(answer.call, answer.completion, frames.size())
			.forEach((bytes) -> frames.add(new Frame(last, bytes, 0)));
		int dropAfter = (answer.fault == Fault.DROP_MID_STREAM) ? frames.size() / 2 : Integer.MAX_VALUE;
		int lastIndex = frames.size() - 1;
		SimClock clock = this.state.clock();
		Flux<ByteBuf> body = Flux.range(0, frames.size()).concatMap((index) -> {
			if (index >= dropAfter) {
				return Mono.error(new SimulatedDisconnect());
			}
			Frame frame = frames.get(index);
			return clock.awaitNanos(frame.due()).then(Mono.fromSupplier(() -> {
				if (frame.tokens() > 0) {
					answer.sent += frame.tokens();
					this.state.book().chargeProduced(answer.admission, frame.tokens());
				}
				if (index == lastIndex) {
					settleBeforeTheLastByte(answer);
				}
				return Unpooled.wrappedBuffer(frame.bytes());
			}));
		}, 1);
		return response.sendHeaders().then(response.send(body, (buffer) -> true)).then();
	}

	private Mono<Void> finishing(Answer answer) {
		return Mono.fromRunnable(() -> finish(answer));
	}

	private void finish(Answer answer) {
		if (!answer.admission.admitted() || !answer.finished.compareAndSet(false, true)) {
			return;
		}
		QuotaBook book = this.state.book();
		boolean current = book.current(answer.admission);
		book.settle(answer.admission, answer.sent);
		book.release(answer.admission);
		if (!current) {
			// a call from before a reset belongs to neither the new books nor the new log
			return;
		}
		Outcome outcome = answer.complete ? Outcome.COMPLETED : Outcome.DROPPED;
		log(answer.arrival, answer.dialect, answer.call, answer.admission.maxTokens(), answer.sent,
				answer.complete ? 200 : 0, outcome, answer.admission.overLimit(),
				answer.admission.overLimit() ? answer.admission.violation().dimension() : null, answer.fault);
	}

	private Reply withFault(Reply reply, Dialect dialect, Fault fault) {
		if (fault != Fault.GARBAGE_HEADERS) {
			return reply;
		}
		Map<String, String> headers = new LinkedHashMap<>(reply.headers());
		headers.putAll(dialect.garbageHeaders());
		return new Reply(reply.status(), headers, reply.body());
	}

	private Mono<Void> reject(Dialect dialect, Route route, String message, String requestId, Arrival arrival,
			HttpServerResponse response) {
		Reply reply = dialect.badRequest(message, requestId);
		this.state.log()
			.add(new RequestRecord(arrival.wall(), arrival.nanos(), dialect.id(), route.operation(), route.api(), null,
					false, 0, 0, 0, reply.status(), Outcome.BAD_REQUEST, false, null, null));
		return send(response, reply);
	}

	private void log(Arrival arrival, Dialect dialect, CallRequest call, long maxTokens, long output, int status,
			Outcome outcome, boolean overLimit, Dimension dimension, Fault fault) {
		this.state.log()
			.add(new RequestRecord(arrival.wall(), arrival.nanos(), dialect.id(), call.operation(), call.api(),
					call.model(), call.stream(), call.inputTokens(), maxTokens, output, status, outcome, overLimit,
					dimension, fault));
	}

	private static Mono<Void> send(HttpServerResponse response, Reply reply) {
		byte[] bytes = head(response, reply);
		return response.sendByteArray(Mono.just(bytes)).then();
	}

	/**
	 * Sends the status, the headers with the full length and half the body, then drops
	 * the connection: the client sees a truncated body, not an error status.
	 */
	private static Mono<Void> sendHalfAndDrop(HttpServerResponse response, Reply reply) {
		byte[] bytes = head(response, reply);
		Flux<ByteBuf> body = Flux.concat(Mono.just(Unpooled.wrappedBuffer(bytes, 0, bytes.length / 2)),
				Mono.error(new SimulatedDisconnect()));
		return response.send(body, (buffer) -> true).then();
	}

	private static byte[] head(HttpServerResponse response, Reply reply) {
		byte[] bytes = reply.body().getBytes(StandardCharsets.UTF_8);
		response.status(reply.status());
		reply.headers().forEach(response::header);
		response.header("content-length", Integer.toString(bytes.length));
		return bytes;
	}

	private record Arrival(Instant wall, long nanos) {
	}

	private record Frame(long due, byte[] bytes, int tokens) {
	}

	/**
	 * The mutable progress of one admitted call.
	 */
	private static final class Answer {

		final Dialect dialect;

		final CallRequest call;

		final String requestId;

		final Arrival arrival;

		final Fault fault;

		final Admission admission;

		final AtomicBoolean finished = new AtomicBoolean();

		volatile Completion completion;

		volatile long sent;

		volatile boolean complete;

		Answer(Dialect dialect, CallRequest call, String requestId, Arrival arrival, Fault fault, Admission admission) {
			this.dialect = dialect;
			this.call = call;
			this.requestId = requestId;
			this.arrival = arrival;
			this.fault = fault;
			this.admission = admission;
		}

	}

	/**
	 * Ends a response abruptly, the way a dropped connection looks to a client.
	 */
	static final class SimulatedDisconnect extends RuntimeException {

		SimulatedDisconnect() {
			super("simulated connection drop", null, false, false);
		}

	}

}
