package dev.llmquota.test.simulator;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.llmquota.test.simulator.RequestRecord.Outcome;
import dev.llmquota.test.simulator.clock.SimClock;
import dev.llmquota.test.simulator.dialect.BadRequestException;
import dev.llmquota.test.simulator.dialect.CallRequest;
import dev.llmquota.test.simulator.dialect.Completion;
import dev.llmquota.test.simulator.dialect.Dialect;
import dev.llmquota.test.simulator.dialect.Json;
import dev.llmquota.test.simulator.dialect.Reply;
import dev.llmquota.test.simulator.dialect.Route;
import dev.llmquota.test.simulator.quota.Admission;
import dev.llmquota.test.simulator.quota.Dimension;
import dev.llmquota.test.simulator.quota.OutputPolicy;
import dev.llmquota.test.simulator.quota.QuotaBook;
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

/**
 * Serves one HTTP exchange: route to a dialect, read, admit on the books, then answer,
 * refuse or fail, and log the outcome.
 */
final class CallHandler {

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
			Route route = dialect.route(uri.path(), query);
			if (route != null) {
				if (!HttpMethod.POST.equals(request.method())) {
					return send(response, dialect.badRequest("Only POST is served on " + uri.path(), "-"));
				}
				return request.receive()
					.aggregate()
					.asByteArray()
					.defaultIfEmpty(new byte[0])
					.flatMap((body) -> serve(dialect, route, body, arrival, response));
			}
		}
		response.status(404);
		return send(response, Reply.json(404, Map.of(), "{\"error\":{\"message\":\"No simulated provider serves "
				+ request.method() + " " + uri.path().replace("\"", "") + "\"}}"));
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
			return reject(dialect, "Could not parse the JSON body of your request: " + ex.getOriginalMessage(),
					requestId, arrival, response);
		}
		catch (BadRequestException ex) {
			return reject(dialect, ex.getMessage(), requestId, arrival, response);
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
		OutputPolicy policy = this.state.outputPolicy(dialect);
		QuotaBook book = this.state.book();
		Admission admission = book.admit(call.model(), call.inputTokens(), call.maxTokens(), policy,
				this.state.enforce());
		if (!admission.admitted()) {
			Reply reply = dialect.refusal(call, admission.violation(), admission.states(), requestId, now);
			log(arrival, dialect, call, admission.maxTokens(), 0, reply.status(), Outcome.REFUSED, true,
					admission.violation().dimension(), fault);
			return send(response, withFault(reply, dialect, fault));
		}
		Map<String, String> headers = new LinkedHashMap<>(
				dialect.successHeaders(call, requestId, admission.states(), now));
		if (fault == Fault.GARBAGE_HEADERS) {
			headers.putAll(dialect.garbageHeaders());
		}
		Answer answer = new Answer(dialect, call, admission, arrival, fault,
				completion(dialect, call, admission, requestId, arrival));
		Mono<Void> delay = (fault == Fault.DELAY_HEADERS)
				? this.state.clock()
					.awaitNanos(this.state.clock().nanoTime() + this.state.faults().headerDelay().toNanos())
				: Mono.empty();
		Mono<Void> exchange = delay.then(
				Mono.defer(() -> call.stream() ? stream(answer, headers, response) : whole(answer, headers, response)));
		return exchange.doFinally((signal) -> finish(answer));
	}

	private Completion completion(Dialect dialect, CallRequest call, Admission admission, String requestId,
			Arrival arrival) {
		LatencyModel latency = this.state.latency();
		long output = latency.outputTokens(admission.maxTokens());
		List<String> tokens = new ArrayList<>();
		for (int i = 0; i < output; i++) {
			tokens.add(SimulatedText.token(i));
		}
		long millis = latency.timeToFirstToken().plus(latency.perOutputToken().multipliedBy(output)).toMillis();
		return new Completion(requestId, dialect.newMessageId(), call.model(), arrival.wall().getEpochSecond(),
				call.inputTokens(), output, List.copyOf(tokens), millis);
	}

	private Mono<Void> whole(Answer answer, Map<String, String> headers, HttpServerResponse response) {
		LatencyModel latency = this.state.latency();
		long done = answer.arrival.nanos() + latency.timeToFirstToken().toNanos()
				+ latency.perOutputToken().toNanos() * answer.completion.outputTokens();
		return this.state.clock().awaitNanos(done).then(Mono.defer(() -> {
			if (answer.fault == Fault.DROP_MID_STREAM) {
				return Mono.error(new SimulatedDisconnect());
			}
			answer.sent = answer.completion.outputTokens();
			Reply reply = Reply.json(200, headers, answer.dialect.completionBody(answer.call, answer.completion));
			return send(response, reply).doOnSuccess((ignored) -> answer.complete = true);
		}));
	}

	private Mono<Void> stream(Answer answer, Map<String, String> headers, HttpServerResponse response) {
		response.status(200);
		headers.forEach(response::header);
		response.header("content-type", answer.dialect.streamContentType());
		response.header("cache-control", "no-cache");
		List<String> tokens = answer.completion.tokens();
		int perFrame = Math.max(1, (tokens.size() + MAX_DELTA_FRAMES - 1) / MAX_DELTA_FRAMES);
		LatencyModel latency = this.state.latency();
		long first = answer.arrival.nanos() + latency.timeToFirstToken().toNanos();
		long perToken = latency.perOutputToken().toNanos();
		List<Frame> frames = new ArrayList<>();
		answer.dialect.streamHead(answer.call, answer.completion)
			.forEach((text) -> frames.add(new Frame(first, text, 0)));
		for (int start = 0; start < tokens.size(); start += perFrame) {
			int end = Math.min(tokens.size(), start + perFrame);
			String text = String.join("", tokens.subList(start, end));
			frames.add(new Frame(first + perToken * end,
					answer.dialect.streamDelta(answer.call, answer.completion, text), end - start));
		}
		long last = first + perToken * tokens.size();
		answer.dialect.streamTail(answer.call, answer.completion)
			.forEach((text) -> frames.add(new Frame(last, text, 0)));
		int dropAfter = (answer.fault == Fault.DROP_MID_STREAM) ? frames.size() / 2 : Integer.MAX_VALUE;
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
				return Unpooled.wrappedBuffer(frame.text().getBytes(StandardCharsets.UTF_8));
			}));
		}, 1);
		return response.sendHeaders().then(response.send(body, (buffer) -> true)).then().doOnSuccess((ignored) -> {
			answer.complete = dropAfter == Integer.MAX_VALUE;
		});
	}

	private void finish(Answer answer) {
		QuotaBook book = this.state.book();
		book.settle(answer.admission, answer.sent);
		book.release(answer.admission);
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

	private Mono<Void> reject(Dialect dialect, String message, String requestId, Arrival arrival,
			HttpServerResponse response) {
		Reply reply = dialect.badRequest(message, requestId);
		this.state.log()
			.add(new RequestRecord(arrival.wall(), arrival.nanos(), dialect.id(), null, false, 0, 0, 0, reply.status(),
					Outcome.BAD_REQUEST, false, null, null));
		return send(response, reply);
	}

	private void log(Arrival arrival, Dialect dialect, CallRequest call, long maxTokens, long output, int status,
			Outcome outcome, boolean overLimit, Dimension dimension, Fault fault) {
		this.state.log()
			.add(new RequestRecord(arrival.wall(), arrival.nanos(), dialect.id(), call.model(), call.stream(),
					call.inputTokens(), maxTokens, output, status, outcome, overLimit, dimension, fault));
	}

	private static Mono<Void> send(HttpServerResponse response, Reply reply) {
		byte[] bytes = reply.body().getBytes(StandardCharsets.UTF_8);
		response.status(reply.status());
		reply.headers().forEach(response::header);
		response.header("content-length", Integer.toString(bytes.length));
		return response.sendByteArray(Mono.just(bytes)).then();
	}

	private record Arrival(Instant wall, long nanos) {
	}

	private record Frame(long due, String text, int tokens) {
	}

	/**
	 * The mutable progress of one admitted call.
	 */
	private static final class Answer {

		final Dialect dialect;

		final CallRequest call;

		final Admission admission;

		final Arrival arrival;

		final Fault fault;

		final Completion completion;

		volatile long sent;

		volatile boolean complete;

		Answer(Dialect dialect, CallRequest call, Admission admission, Arrival arrival, Fault fault,
				Completion completion) {
			this.dialect = dialect;
			this.call = call;
			this.admission = admission;
			this.arrival = arrival;
			this.fault = fault;
			this.completion = completion;
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
