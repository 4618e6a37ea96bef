package dev.llmquota.test.junit;

import java.util.function.Supplier;

import dev.llmquota.test.simulator.ProviderSimulator;
import dev.llmquota.test.simulator.ProviderSimulatorBuilder;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Runs a {@link ProviderSimulator} around tests and injects it into test methods.
 *
 * <p>
 * Registered on a static field, or through {@code @ExtendWith} (default configuration: no
 * limits), it starts once per class and is {@link ProviderSimulator#reset() reset} before
 * each test; on an instance field it starts fresh for each test.
 *
 * <pre>
 * &#64;RegisterExtension
 * static ProviderSimulatorExtension simulator = new ProviderSimulatorExtension(
 *         ProviderSimulator.builder().model("gpt-4o", (limits) -&gt; limits.requestsPerMinute(60)));
 * </pre>
 */
public class ProviderSimulatorExtension
		implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback, ParameterResolver {

	private final Supplier<ProviderSimulator> factory;

	private ProviderSimulator simulator;

	private boolean perClass;

	/**
	 * An extension whose simulator has the default configuration.
	 */
	public ProviderSimulatorExtension() {
		this(ProviderSimulator.builder());
	}

	/**
	 * An extension that starts simulators from this builder.
	 * @param builder the configured builder
	 */
	public ProviderSimulatorExtension(ProviderSimulatorBuilder builder) {
		this.factory = builder::start;
	}

	/**
	 * The running simulator.
	 * @return the simulator
	 * @throws IllegalStateException outside a test
	 */
	public ProviderSimulator simulator() {
		if (this.simulator == null) {
			throw new IllegalStateException("The provider simulator runs only while tests run");
		}
		return this.simulator;
	}

	/**
	 * The running simulator's base URL.
	 * @return the base URL
	 */
	public String baseUrl() {
		return simulator().baseUrl();
	}

	@Override
	public void beforeAll(ExtensionContext context) {
		this.simulator = this.factory.get();
		this.perClass = true;
	}

	@Override
	public void afterAll(ExtensionContext context) {
		stop();
	}

	@Override
	public void beforeEach(ExtensionContext context) {
		if (this.perClass) {
			this.simulator.reset();
		}
		else {
			this.simulator = this.factory.get();
		}
	}

	@Override
	public void afterEach(ExtensionContext context) {
		if (!this.perClass) {
			stop();
		}
	}

	private void stop() {
		if (this.simulator != null) {
			this.simulator.close();
			this.simulator = null;
		}
	}

	@Override
	public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		return parameterContext.getParameter().getType() == ProviderSimulator.class;
	}

	@Override
	public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		return simulator();
	}

}
