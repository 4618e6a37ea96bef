package dev.llmquota.store;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The transport of the Redis store: runs {@code quota.lua} and waits for its answer
 * ({@link #call}), or sends it without waiting ({@link #send}), keeping the writes in
 * flight so a later read sees them ({@link #awaitWrites}). Every failed answer goes to
 * one handler, which decides whether Redis is down. Knows nothing of buckets.
 */
final class RedisConnection {

	@SuppressWarnings("rawtypes")
	private static final RedisScript<List> SCRIPT = RedisScript
		.of(new ClassPathResource("dev/llmquota/store/quota.lua"), List.class);

	/** The longest wait for Redis at start-up, when the connection opens. */
	static final Duration FIRST_ANSWER = Duration.ofSeconds(5);

	private final ReactiveStringRedisTemplate redis;

	private final Duration timeout;

	/**
	 * Tests only: the caller's clock, in nanoseconds, which the script then runs on
	 * instead of Redis's; {@code null} in production.
	 */
	private final LongSupplier testClock;

	private final Consumer<Throwable> failed;

	/** Writes sent and not yet answered. */
	private final Set<CompletableFuture<List<Object>>> writes = ConcurrentHashMap.newKeySet();

	private final AtomicBoolean closed = new AtomicBoolean();

	RedisConnection(ReactiveRedisConnectionFactory connectionFactory, Duration timeout, LongSupplier testClock,
			Consumer<Throwable> failed) {
		this.redis = new ReactiveStringRedisTemplate(connectionFactory);
		this.timeout = timeout;
		this.testClock = testClock;
		this.failed = failed;
	}

	/** Runs a script and waits for its answer, twice the timeout at most. */
	List<Object> call(QuotaScript.Call call) {
		return call(call, patience());
	}

	/** How long an answer may take before it is late: twice the timeout. */
	Duration patience() {
		return this.timeout.multipliedBy(2);
	}

	/**
	 * Runs a script and waits for its answer.
	 * @throws RedisDown when it does not come in time
	 */
	List<Object> call(QuotaScript.Call call, Duration patience) {
		try {
			return execute(call, patience).get(patience.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new RedisDown();
		}
		catch (ExecutionException | TimeoutException ex) {
			this.failed.accept((ex.getCause() != null) ? ex.getCause() : ex);
			throw new RedisDown();
		}
	}

	/** Sends a script without waiting; a failed answer goes to the handler. */
	void send(QuotaScript.Call call) {
		if (this.closed.get()) {
			// shutting down: the leases were released on close
			return;
		}
		CompletableFuture<List<Object>> write = execute(call);
		this.writes.add(write);
		write.whenComplete((reply, error) -> this.writes.remove(write));
		write.exceptionally((error) -> {
			this.failed.accept(error);
			return null;
		});
	}

	/**
	 * Waits for the writes sent so far (releases, refunds, corrections) to land before a
	 * read or a booking: a slot released or a refund given here must be seen by the next
	 * booking, whichever connection each goes out on. Runs on the engine's store thread
	 * or a caller that reads, never on a thread that ends a call.
	 */
	void awaitWrites() {
		for (CompletableFuture<List<Object>> write : List.copyOf(this.writes)) {
			try {
				write.get(this.timeout.toNanos(), TimeUnit.NANOSECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			catch (ExecutionException | TimeoutException ex) {
				// its failure is handled where it was sent
			}
		}
	}

	/** Runs the script; its reply is one list (the multi-bulk reply of EVALSHA). */
	CompletableFuture<List<Object>> execute(QuotaScript.Call call) {
		return execute(call, this.timeout);
	}

	/**
	 * Runs the script; the reply may come until {@code timeout}, which is the only bound
	 * on how long the command is kept: the caller decides how long it waits.
	 */
	@SuppressWarnings("unchecked")
	CompletableFuture<List<Object>> execute(QuotaScript.Call call, Duration timeout) {
		// deferred: a connection that cannot even be asked fails the future,
		// not the caller
		return Flux.defer(() -> this.redis.execute(SCRIPT, call.keys(), call.args()))
			.next()
			.map((reply) -> (List<Object>) reply)
			.timeout(timeout)
			.toFuture();
	}

	/**
	 * Loads the script at start-up, when the first command also opens the connection: it
	 * may take longer than one answer should, so it gets {@link #FIRST_ANSWER}.
	 */
	void loadScript() {
		try {
			scriptLoad(FIRST_ANSWER.compareTo(this.timeout) > 0 ? FIRST_ANSWER : this.timeout)
				.onErrorResume((error) -> {
					this.failed.accept(error);
					return Mono.empty();
				})
				.toFuture()
				.get();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException ex) {
			this.failed.accept(ex.getCause());
		}
	}

	/** Loads the script (a restarted server has none). */
	Mono<String> scriptLoad(Duration timeout) {
		return Flux
			.defer(() -> this.redis.execute((connection) -> connection.scriptingCommands()
				.scriptLoad(ByteBuffer.wrap(SCRIPT.getScriptAsString().getBytes(StandardCharsets.UTF_8)))))
			.next()
			.timeout(timeout);
	}

	/** Asks whether Redis answers at all. */
	Mono<String> ping() {
		return Flux.defer(() -> this.redis.execute((connection) -> connection.ping())).next().timeout(this.timeout);
	}

	/** The script's time argument for an operation at the caller's {@code now}. */
	String time(long now) {
		return QuotaScript.time((this.testClock != null) ? now : null);
	}

	/** The monotonic time: the caller's clock where the script runs on it. */
	long nanoTime() {
		return (this.testClock != null) ? this.testClock.getAsLong() : System.nanoTime();
	}

	/** The script's time argument for an operation the caller gives no time. */
	String time() {
		return QuotaScript.time((this.testClock != null) ? this.testClock.getAsLong() : null);
	}

	boolean closed() {
		return this.closed.get();
	}

	/** Sends nothing more; returns whether it was open. */
	boolean close() {
		return this.closed.compareAndSet(false, true);
	}

	/** Redis did not answer in time; the caller falls back. */
	static final class RedisDown extends RuntimeException {

		RedisDown() {
			super(null, null, false, false);
		}

	}

}
