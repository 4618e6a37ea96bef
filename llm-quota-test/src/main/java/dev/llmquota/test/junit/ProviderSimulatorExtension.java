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
 * limits), it starts once for the declaring class, is shared with its {@code @Nested}
 * classes and is {@link ProviderSimulator#reset() reset} before each test; on an instance
 * field it starts fresh for each test.
 *
 * <pre>
 * &#64;RegisterExtension
 * static ProviderSimulatorExtension simulator = new ProviderSimulatorExtension(
 *         ProviderSimulator.builder().model("gpt-4o", (limits) -&gt; limits.requestsPerMinute(60)));
 * </pre>
 */
public class ProviderSimulatorExtension
		implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback, ParameterResolver {

	private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace
		.create(ProviderSimulatorExtension.class);

	private final Supplier<ProviderSimulator> factory;

	private volatile ProviderSimulator simulator;

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
		ProviderSimulator running = this.simulator;
		if (running == null) {
			throw new IllegalStateException("The provider simulator runs only while tests run");
		}
		return running;
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
		startUnlessRunning(context);
	}

	@Override
	public void afterAll(ExtensionContext context) {
		stopIfStartedBy(context);
	}

	@Override
	public void beforeEach(ExtensionContext context) {
		Running running = running(context);
		if (running != null) {
			running.simulator().reset();
		}
		else {
			startUnlessRunning(context);
		}
	}

	@Override
	public void afterEach(ExtensionContext context) {
		stopIfStartedBy(context);
	}

	/**
	 * The simulator of this extension started by this context or an enclosing one; the
	 * store looks through the enclosing contexts.
	 */
	private Running running(ExtensionContext context) {
		return context.getStore(NAMESPACE).get(this, Running.class);
	}

	private void startUnlessRunning(ExtensionContext context) {
		if (running(context) == null) {
			ProviderSimulator started = this.factory.get();
			context.getStore(NAMESPACE).put(this, new Running(started, context.getUniqueId()));
			this.simulator = started;
		}
	}

	private void stopIfStartedBy(ExtensionContext context) {
		Running running = running(context);
		if (running != null && running.owner().equals(context.getUniqueId())) {
			context.getStore(NAMESPACE).remove(this);
			this.simulator = null;
			running.simulator().close();
		}
	}

	@Override
	public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		return parameterContext.getParameter().getType() == ProviderSimulator.class;
	}

	@Override
	public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		Running running = running(extensionContext);
		return (running != null) ? running.simulator() : simulator();
	}

	/**
	 * A started simulator and the unique id of the context that started it, the only one
	 * that stops it.
	 */
	private record Running(ProviderSimulator simulator, String owner) {
	}

}
