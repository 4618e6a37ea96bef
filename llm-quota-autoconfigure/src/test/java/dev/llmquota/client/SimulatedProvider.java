package dev.llmquota.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import dev.llmquota.core.Pool;
import dev.llmquota.core.PoolSnapshot;
import dev.llmquota.test.simulator.ProviderSimulator;
import dev.llmquota.test.simulator.ProviderSimulatorBuilder;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * A simulated provider of one dialect and a governed application pointed at it, with one
 * model, {@value #MODEL}, configured on both sides.
 */
final class SimulatedProvider implements AutoCloseable {

	static final String MODEL = "test-model";

	static final String PROVIDER = "provider";

	final DialectCase dialect;

	final ProviderSimulator simulator;

	final GovernedApp app;

	final WebClient client;

	private SimulatedProvider(DialectCase dialect, ProviderSimulator simulator, GovernedApp app) {
		this.dialect = dialect;
		this.simulator = simulator;
		this.app = app;
		this.client = app.webClient();
	}

	static SimulatedProvider start(DialectCase dialect, Consumer<ProviderSimulatorBuilder> simulator,
			String... properties) {
		return start(false, dialect, simulator, properties);
	}

	/** Starts the governed application as a web server, for its actuator. */
	static SimulatedProvider startWeb(DialectCase dialect, Consumer<ProviderSimulatorBuilder> simulator,
			String... properties) {
		return start(true, dialect, simulator, properties);
	}

	private static SimulatedProvider start(boolean web, DialectCase dialect,
			Consumer<ProviderSimulatorBuilder> simulator, String... properties) {
		ProviderSimulatorBuilder builder = ProviderSimulator.builder();
		simulator.accept(builder);
		ProviderSimulator sim = builder.start();
		List<String> all = new ArrayList<>();
		String prefix = "llm.quota.providers." + PROVIDER + ".";
		all.add(prefix + "base-url=" + sim.baseUrl());
		all.add(prefix + "dialect=" + dialect.dialect());
		for (String property : properties) {
			boolean absolute = property.startsWith("llm.") || property.startsWith("management.")
					|| property.startsWith("spring.") || property.startsWith("server.");
			all.add(absolute ? property : prefix + property);
		}
		try {
			String[] values = all.toArray(String[]::new);
			return new SimulatedProvider(dialect, sim, web ? GovernedApp.startWeb(values) : GovernedApp.start(values));
		}
		catch (RuntimeException ex) {
			sim.close();
			throw ex;
		}
	}

	/** A call's request, ready to send with the governed client. */
	WebClient.RequestHeadersSpec<?> call(int maxTokens, boolean stream, String prompt) {
		return this.client.post()
			.uri(this.simulator.baseUrl() + this.dialect.path(MODEL, stream))
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(this.dialect.body(MODEL, maxTokens, stream, prompt));
	}

	Mono<String> send(int maxTokens, String prompt) {
		return call(maxTokens, false, prompt).retrieve().bodyToMono(String.class);
	}

	Flux<String> stream(int maxTokens, String prompt) {
		return call(maxTokens, true, prompt).retrieve().bodyToFlux(String.class);
	}

	Pool pool() {
		return this.app.engine().pool(PROVIDER, MODEL);
	}

	PoolSnapshot snapshot() {
		return this.app.engine().snapshot(pool());
	}

	int inFlight() {
		return this.app.engine().inFlight(pool().account());
	}

	int waiting() {
		return this.app.engine().waiting(pool().account());
	}

	/** An ungoverned client: another team spending from the same account. */
	Mono<String> sendOutsideQuota(int maxTokens, String prompt) {
		return WebClient.create()
			.post()
			.uri(this.simulator.baseUrl() + this.dialect.path(MODEL, false))
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(this.dialect.body(MODEL, maxTokens, false, prompt))
			.retrieve()
			.bodyToMono(String.class)
			.timeout(Duration.ofSeconds(10));
	}

	static String words(int count) {
		return "word ".repeat(count).trim();
	}

	static Map<String, Object> none() {
		return Map.of();
	}

	@Override
	public void close() {
		try {
			this.app.close();
		}
		finally {
			this.simulator.close();
		}
	}

}
