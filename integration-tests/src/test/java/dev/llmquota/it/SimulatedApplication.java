package dev.llmquota.it;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;

import dev.llmquota.core.Pool;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.test.simulator.ProviderSimulator;
import dev.llmquota.test.simulator.ProviderSimulatorBuilder;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

import static org.awaitility.Awaitility.await;

/**
 * A provider simulator on loopback and an application with nothing but the starter, the
 * client library under test and properties, calling it: what every test of this module
 * starts from.
 */
public final class SimulatedApplication implements AutoCloseable {

	/** How long a test waits for something that happens on another thread. */
	public static final Duration PATIENCE = Duration.ofSeconds(20);

	/** The application: auto-configuration only. */
	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

	}

	private final ProviderSimulator simulator;

	private final ConfigurableApplicationContext context;

	private SimulatedApplication(ProviderSimulator simulator, ConfigurableApplicationContext context) {
		this.simulator = simulator;
		this.context = context;
	}

	/**
	 * The properties of an application with an {@code openai} entry (gpt-4o: 600 requests
	 * a minute, one call at a time) and an {@code anthropic} entry (Claude Sonnet 4.5:
	 * 600,000 input tokens a minute) on the simulator, then the test's own.
	 * @param base the simulator's base URL
	 * @param more the test's own properties
	 * @return the properties
	 */
	public static List<String> openAiAndAnthropic(String base, String... more) {
		List<String> all = new ArrayList<>(List.of("spring.ai.openai.api-key=test-key",
				"spring.ai.anthropic.api-key=test-key", "llm.quota.providers.openai.base-url=" + base + "/v1",
				"llm.quota.providers.openai.add-stream-usage=true",
				"llm.quota.providers.openai.models.gpt-4o.requests-per-minute=600",
				"llm.quota.providers.openai.models.gpt-4o.concurrent-requests=1",
				"llm.quota.providers.anthropic.base-url=" + base + "/v1/messages",
				"llm.quota.providers.anthropic.dialect=anthropic",
				"llm.quota.providers.anthropic.models.claude-sonnet-4-5.input-tokens-per-minute=600000"));
		all.addAll(List.of(more));
		return all;
	}

	/**
	 * Starts a simulator, then the application.
	 * @param simulator changes to the simulator, whose answers are short (5 output
	 * tokens, the first after 50 ms): these tests are about governance, not latency
	 * @param properties the application's properties, given the simulator's base URL
	 * @param sources configuration classes of the test's own, beside auto-configuration
	 * @return the running pair
	 */
	public static SimulatedApplication start(Consumer<ProviderSimulatorBuilder> simulator,
			Function<String, List<String>> properties, Class<?>... sources) {
		ProviderSimulatorBuilder builder = ProviderSimulator.builder()
			.latency((latency) -> latency.timeToFirstToken(Duration.ofMillis(50)).fixedOutputTokens(5));
		simulator.accept(builder);
		ProviderSimulator started = builder.start();
		List<String> all = new ArrayList<>(
				List.of("spring.main.banner-mode=off", "spring.reactor.netty.shutdown-quiet-period=0s"));
		all.addAll(properties.apply(started.baseUrl()));
		List<Class<?>> classes = new ArrayList<>(List.of(App.class));
		classes.addAll(List.of(sources));
		try {
			return new SimulatedApplication(started,
					new SpringApplicationBuilder(classes.toArray(Class<?>[]::new)).web(WebApplicationType.NONE)
						.properties(all.toArray(String[]::new))
						.run());
		}
		catch (RuntimeException ex) {
			started.close();
			throw ex;
		}
	}

	/**
	 * Returns the simulator.
	 * @return the simulator
	 */
	public ProviderSimulator simulator() {
		return this.simulator;
	}

	/**
	 * Returns the application's context.
	 * @return the context
	 */
	public ConfigurableApplicationContext context() {
		return this.context;
	}

	/**
	 * Returns a bean of the application.
	 * @param <T> its type
	 * @param type its type
	 * @return the bean
	 */
	public <T> T bean(Class<T> type) {
		return this.context.getBean(type);
	}

	/**
	 * Returns a pool of the application's engine.
	 * @param provider the provider entry
	 * @param model the model
	 * @return the pool
	 */
	public Pool pool(String provider, String model) {
		return bean(QuotaEngine.class).pool(provider, model);
	}

	/**
	 * Returns how many calls of a pool's account hold a permit.
	 * @param pool the pool
	 * @return the calls in flight
	 */
	public int inFlight(Pool pool) {
		return bean(QuotaEngine.class).inFlight(pool.account());
	}

	/**
	 * Returns how many calls of a pool's account wait for admission.
	 * @param pool the pool
	 * @return the calls waiting
	 */
	public int waiting(Pool pool) {
		return bean(QuotaEngine.class).waiting(pool.account());
	}

	/**
	 * Waits until the simulator has logged a number of requests: it logs a completed call
	 * as its last byte goes out, so the caller may be done first.
	 * @param count the requests
	 */
	public void awaitRequests(int count) {
		await().atMost(PATIENCE).until(() -> this.simulator.requestLog().size() == count);
	}

	@Override
	public void close() {
		try {
			this.context.close();
		}
		finally {
			this.simulator.close();
		}
	}

}
