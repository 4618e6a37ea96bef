package dev.llmquota.sample;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import dev.llmquota.client.LlmQuotaCalls;
import dev.llmquota.client.Route;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.test.simulator.ProviderSimulator;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/**
 * Runs the demo once the service is up: the batch (first without llm-quota when
 * {@code demo.contrast} is set), a live progress line, the report, then the dashboard's
 * address; the service keeps serving.
 */
@Component
@ConditionalOnBooleanProperty("demo.run-batch")
class DemoRunner implements ApplicationRunner {

	private final BatchJob job;

	private final QuotaEngine engine;

	private final DemoProperties properties;

	private final ProviderSimulator simulator;

	private final Environment environment;

	private final Map<String, ProviderSimulator> deployments = new LinkedHashMap<>();

	private final List<Route> routes;

	DemoRunner(BatchJob job, QuotaEngine engine, DemoProperties properties, ObjectProvider<ProviderSimulator> simulator,
			ObjectProvider<DemoRoutesConfiguration.Deployments> deployments, LlmQuotaCalls calls,
			Environment environment) {
		this.job = job;
		this.engine = engine;
		this.properties = properties;
		this.simulator = simulator.getIfAvailable();
		this.environment = environment;
		if (this.simulator != null) {
			this.deployments.put(properties.getProvider(), this.simulator);
		}
		deployments.ifAvailable((more) -> this.deployments.putAll(more.simulators()));
		this.routes = calls.routes();
	}

	@Override
	public void run(ApplicationArguments args) {
		Thread demo = new Thread(this::demo, "demo-batch");
		demo.setDaemon(true);
		demo.start();
	}

	private void demo() {
		DemoConsole console = new DemoConsole(this.engine, this.properties, this.simulator, System.out);
		Route route = this.routes.stream()
			.filter((each) -> each.name().equals(this.properties.getRoute()))
			.findFirst()
			.orElse(null);
		ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "demo-progress");
			thread.setDaemon(true);
			return thread;
		});
		long interval = this.properties.getProgressInterval().toMillis();
		ticker.scheduleAtFixedRate(() -> {
			BatchJob.Progress progress = this.job.progress();
			if (progress != null && progress.running()) {
				console.progress(progress, this.job.refusalsSince(progress));
			}
		}, interval, interval, TimeUnit.MILLISECONDS);
		try {
			BatchJob.Result without = null;
			if (this.properties.isContrast()) {
				without = this.job.run(false);
				// fresh accounts for the governed run
				this.deployments.values().forEach(ProviderSimulator::reset);
			}
			BatchJob.Result with = this.job.run(true);
			console.report(with);
			if (route != null) {
				console.route(route, this.deployments);
			}
			if (without != null) {
				console.contrast(without, with);
			}
			System.out.printf("%nDashboard: http://127.0.0.1:%s/  (Ctrl-C to stop)%n",
					this.environment.getProperty("local.server.port"));
		}
		finally {
			ticker.shutdownNow();
		}
	}

}
