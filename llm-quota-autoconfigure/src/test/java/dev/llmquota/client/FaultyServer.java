package dev.llmquota.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An HTTP/1.1 server on loopback, on plain sockets, that fails each exchange at the stage
 * it is told: before the request is read, after it but before the status, in the middle
 * of the headers, of a body or of a stream. What a client sees then is what a dropped
 * connection looks like at that stage.
 */
final class FaultyServer implements AutoCloseable {

	/**
	 * Where an exchange breaks.
	 */
	enum Stage {

		/**
		 * The connection is closed as soon as it is accepted, before the request is read.
		 */
		SEND,

		/** The request is read, then the connection closes without a status. */
		STATUS,

		/**
		 * The request is read and nothing is answered until the client gives up: its read
		 * timeout ends the exchange.
		 */
		SILENT,

		/** Half a status line and header block, then the connection closes. */
		HEADERS,

		/** A JSON answer announces its length, sends a part of it, and closes. */
		BODY,

		/** A stream sends two events and closes without its end. */
		MID_STREAM,

		/** Nothing breaks: a whole JSON answer. */
		NONE,

		/**
		 * A 429 naming its wait ({@code retry-after: 20}) announces its body's length,
		 * sends half of it, and closes.
		 */
		REFUSAL_BODY,

		/** A 503 announces its body's length, sends half of it, and closes. */
		OVERLOAD_BODY

	}

	private final ServerSocket socket;

	private final ExecutorService threads = Executors.newCachedThreadPool((task) -> {
		Thread thread = new Thread(task, "faulty-server");
		thread.setDaemon(true);
		return thread;
	});

	private final AtomicReference<Stage> next = new AtomicReference<>(Stage.NONE);

	FaultyServer() {
		try {
			this.socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		this.threads.execute(this::accept);
	}

	String baseUrl() {
		return "http://127.0.0.1:" + this.socket.getLocalPort();
	}

	/** Makes every following exchange break at this stage. */
	void failAt(Stage stage) {
		this.next.set(stage);
	}

	private void accept() {
		while (!this.socket.isClosed()) {
			try {
				Socket connection = this.socket.accept();
				Stage stage = this.next.get();
				this.threads.execute(() -> serve(connection, stage));
			}
			catch (IOException ex) {
				// closed
			}
		}
	}

	private void serve(Socket connection, Stage stage) {
		try (connection) {
			connection.setSoLinger(true, 0);
			if (stage == Stage.SEND) {
				return;
			}
			readRequest(connection.getInputStream());
			OutputStream out = connection.getOutputStream();
			switch (stage) {
				case STATUS -> {
				}
				case SILENT -> connection.getInputStream().read();
				case HEADERS -> write(out, "HTTP/1.1 200 OK\r\nContent-Ty");
				case BODY ->
					write(out, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n"
							+ "{\"id\":\"chatcmpl-1\",\"choices\":[{\"message\":{\"content\":\"Hel");
				case REFUSAL_BODY -> write(out, "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n"
						+ "retry-after: 20\r\nContent-Length: 200\r\n\r\n{\"error\":{\"message\":\"Rate limit reached for"
						+ " gpt-4o on requests per min (RPM)");
				case OVERLOAD_BODY ->
					write(out, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
							+ "Content-Length: 200\r\n\r\n{\"error\":{\"message\":\"Overloa");
				case MID_STREAM -> write(out,
						"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
								+ chunk("data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n")
								+ chunk("data: {\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}\n\n"));
				default -> {
					String body = "{\"id\":\"chatcmpl-1\",\"choices\":[{\"message\":{\"content\":\"Hello\"}}],"
							+ "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1,\"total_tokens\":6}}";
					write(out, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
							+ "Content-Length: " + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body);
				}
			}
			out.flush();
		}
		catch (IOException ex) {
			// the client went first
		}
	}

	private static String chunk(String data) {
		return Integer.toHexString(data.getBytes(StandardCharsets.UTF_8).length) + "\r\n" + data + "\r\n";
	}

	private static void write(OutputStream out, String text) throws IOException {
		out.write(text.getBytes(StandardCharsets.UTF_8));
	}

	/** Reads a request's head and its body, by Content-Length or chunks. */
	private static void readRequest(InputStream in) throws IOException {
		StringBuilder head = new StringBuilder();
		while (!head.toString().endsWith("\r\n\r\n")) {
			int next = in.read();
			if (next < 0) {
				throw new SocketException("request ended early");
			}
			head.append((char) next);
		}
		String lower = head.toString().toLowerCase(java.util.Locale.ROOT);
		int length = lower.indexOf("content-length:");
		if (length >= 0) {
			int end = lower.indexOf("\r\n", length);
			in.readNBytes(Integer.parseInt(lower.substring(length + 15, end).trim()));
		}
		else if (lower.contains("transfer-encoding: chunked")) {
			while (true) {
				StringBuilder size = new StringBuilder();
				while (!size.toString().endsWith("\r\n")) {
					size.append((char) in.read());
				}
				int bytes = Integer.parseInt(size.toString().trim(), 16);
				in.readNBytes(bytes + 2);
				if (bytes == 0) {
					return;
				}
			}
		}
	}

	@Override
	public void close() {
		try {
			this.socket.close();
		}
		catch (IOException ex) {
			// closing
		}
		this.threads.shutdownNow();
	}

}
