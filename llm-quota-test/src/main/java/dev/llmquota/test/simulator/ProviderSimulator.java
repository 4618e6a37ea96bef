package dev.llmquota.test.simulator;

import java.time.Duration;
import java.util.Map;

import dev.llmquota.test.simulator.clock.SimClock;
import dev.llmquota.test.simulator.quota.Dimension;
import dev.llmquota.test.simulator.quota.DimensionState;
import dev.llmquota.test.simulator.quota.QuotaBook;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * A running provider simulator on loopback: serves every dialect on one port, meters one
 * account, and records each request.
 *
 * <pre>
 * try (ProviderSimulator sim = ProviderSimulator.builder()
 *         .model("gpt-4o", (limits) -&gt; limits.requestsPerMinute(500).tokensPerMinute(30_000))
 *         .start()) {
 *     String baseUrl = sim.baseUrl(); // http://127.0.0.1:PORT
 * }
 * </pre>
 */
public final class ProviderSimulator implements AutoCloseable {

	private final SimulatorState state;

	private final DisposableServer server;

	private final Runnable resetFaults;

	private final boolean initiallyExhausted;

	ProviderSimulator(SimulatorState state, String host, int port, Runnable resetFaults, boolean initiallyExhausted) {
		this.state = state;
		this.resetFaults = resetFaults;
		this.initiallyExhausted = initiallyExhausted;
		CallHandler handler = new CallHandler(state);
		this.server = HttpServer.create().host(host).port(port).handle(handler::handle).bindNow(Duration.ofSeconds(10));
	}

	/**
	 * A builder with no limits, no latency and the system clock on a random port.
	 * @return a builder
	 */
	public static ProviderSimulatorBuilder builder() {
		return new ProviderSimulatorBuilder();
	}

	/**
	 * The bound port.
	 * @return the port
	 */
	public int port() {
		return this.server.port();
	}

	/**
	 * The base URL, for example {@code http://127.0.0.1:53117}.
	 * @return the base URL without trailing slash
	 */
	public String baseUrl() {
		return "http://" + this.server.host() + ":" + this.server.port();
	}

	/**
	 * The requests served so far.
	 * @return the log
	 */
	public RequestLog requestLog() {
		return this.state.log();
	}

	/**
	 * The fault plan; queue faults for the next calls or set rates.
	 * @return the fault plan
	 */
	public FaultPlan faults() {
		return this.state.faults();
	}

	/**
	 * Switches administrative exhaustion on or off: while on, every call gets the
	 * dialect's non-retryable quota answer (OpenAI {@code insufficient_quota}, Anthropic
	 * spend cap, Bedrock {@code ServiceQuotaExceededException}, Gemini per-day quota,
	 * Azure's day-long retry).
	 * @param exhausted whether the account is exhausted
	 */
	public void exhausted(boolean exhausted) {
		this.state.exhausted(exhausted);
	}

	/**
	 * The state of every meter of a scope, as the provider's books hold it now.
	 * @param scope a model id, or {@link QuotaBook#ACCOUNT}
	 * @return states by dimension
	 */
	public Map<Dimension, DimensionState> states(String scope) {
		return this.state.book().scopeStates(scope);
	}

	/**
	 * What is left on one meter now.
	 * @param scope a model id, or {@link QuotaBook#ACCOUNT}
	 * @param dimension the dimension
	 * @return the remaining units
	 * @throws IllegalArgumentException if that scope has no such limit
	 */
	public long remaining(String scope, Dimension dimension) {
		DimensionState state = states(scope).get(dimension);
		if (state == null) {
			throw new IllegalArgumentException(scope + " has no " + dimension.id() + " limit");
		}
		return state.remaining();
	}

	/**
	 * The simulator's clock.
	 * @return the clock
	 */
	public SimClock clock() {
		return this.state.clock();
	}

	/**
	 * Refills every meter, forgets the log, restores the configured faults and exhaustion
	 * and restarts the seeded output lengths; for reuse between tests. Calls still in
	 * flight finish, but no longer touch the new books nor the log.
	 */
	public void reset() {
		this.state.book().reset();
		this.state.log().clear();
		this.resetFaults.run();
		this.state.exhausted(this.initiallyExhausted);
		this.state.latency().reseed();
	}

	/**
	 * Stops the server.
	 */
	@Override
	public void close() {
		// Clients may keep idle connections open; close them rather than wait for them.
		this.server.dispose();
		try {
			this.server.onDispose().block(Duration.ofSeconds(1));
		}
		catch (IllegalStateException ex) {
			// timed out: the port is released anyway once the channels close
		}
	}

}
