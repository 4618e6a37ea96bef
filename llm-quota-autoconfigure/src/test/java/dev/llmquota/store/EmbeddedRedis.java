package dev.llmquota.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.time.Duration;

import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import redis.embedded.RedisServer;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A real Redis server for tests, started from the binary the {@code embedded-redis}
 * artifact ships (no Docker here), on a free loopback port, without persistence. One
 * server is shared by the tests of a JVM; a test that stops Redis starts its own.
 */
public final class EmbeddedRedis implements AutoCloseable {

	private static EmbeddedRedis shared;

	private final int port;

	private RedisServer server;

	private EmbeddedRedis(int port) {
		this.port = port;
		start();
	}

	/**
	 * Returns the server shared by this JVM's tests, started on first use.
	 * @return the shared server
	 */
	public static synchronized EmbeddedRedis shared() {
		if (shared == null) {
			shared = new EmbeddedRedis(freePort());
			Runtime.getRuntime().addShutdownHook(new Thread(shared::close));
		}
		return shared;
	}

	/**
	 * Starts a server of the caller's own.
	 * @return the server
	 */
	public static EmbeddedRedis own() {
		return new EmbeddedRedis(freePort());
	}

	public int port() {
		return this.port;
	}

	/** Starts the server (again, after {@link #stop()}), on the same port. */
	public synchronized void start() {
		try {
			this.server = RedisServer.newRedisServer()
				.bind("127.0.0.1")
				.port(this.port)
				.setting("save \"\"")
				.setting("appendonly no")
				.build();
			this.server.start();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not start the embedded Redis server", ex);
		}
	}

	/** Stops the server: clients see refused connections until it starts again. */
	public synchronized void stop() {
		try {
			this.server.stop();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Returns a started connection factory to this server that reconnects quickly after
	 * an outage (Lettuce backs off up to 30 s by default).
	 * @return the connection factory; the caller destroys it
	 */
	public LettuceConnectionFactory connectionFactory() {
		LettuceClientConfiguration client = LettuceClientConfiguration.builder()
			.clientResources(ClientResources.builder().reconnectDelay(Delay.constant(Duration.ofMillis(100))).build())
			.build();
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", this.port), client);
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	@Override
	public void close() {
		try {
			stop();
		}
		catch (UncheckedIOException ex) {
			// already stopped
		}
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
