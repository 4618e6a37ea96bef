package dev.llmquota.client;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * A loopback HTTP server that answers every POST with a status, headers and body (the
 * same until told otherwise), and keeps the bytes of each request it received.
 */
final class LoopbackServer implements AutoCloseable {

	private final DisposableServer server;

	private final List<byte[]> requests = new CopyOnWriteArrayList<>();

	private volatile Answer answer;

	/** The answer after the next, if it changes. */
	private Answer then;

	LoopbackServer(int status, Map<String, String> headers, String body) {
		answer(status, headers, body);
		this.server = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.handle((request, response) -> request.receive()
				.aggregate()
				.asByteArray()
				.defaultIfEmpty(new byte[0])
				.flatMap((bytes) -> {
					this.requests.add(bytes);
					Answer current = next();
					response.status(current.status());
					current.headers().forEach(response::header);
					return response.sendByteArray(Mono.just(current.body())).then();
				}))
			.bindNow();
	}

	/**
	 * Answers the calls from now on with these.
	 * @param status the status
	 * @param headers the headers
	 * @param body the body
	 */
	void answer(int status, Map<String, String> headers, String body) {
		this.answer = new Answer(status, headers, body.getBytes(StandardCharsets.UTF_8));
	}

	/**
	 * Answers the next call as now, and the calls after it with these.
	 * @param status the status
	 * @param headers the headers
	 * @param body the body
	 */
	synchronized void answerNext(int status, Map<String, String> headers, String body) {
		this.then = new Answer(status, headers, body.getBytes(StandardCharsets.UTF_8));
	}

	private synchronized Answer next() {
		Answer current = this.answer;
		if (this.then != null) {
			this.answer = this.then;
			this.then = null;
		}
		return current;
	}

	private record Answer(int status, Map<String, String> headers, byte[] body) {
	}

	String baseUrl() {
		return "http://127.0.0.1:" + this.server.port();
	}

	List<byte[]> requests() {
		return this.requests;
	}

	@Override
	public void close() {
		// Clients keep idle connections open; close them rather than wait for them.
		this.server.dispose();
		try {
			this.server.onDispose().block(java.time.Duration.ofSeconds(1));
		}
		catch (IllegalStateException ex) {
			// timed out waiting for a client's idle connection; the channels close anyway
		}
	}

}
