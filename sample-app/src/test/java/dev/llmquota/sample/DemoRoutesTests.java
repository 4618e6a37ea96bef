package dev.llmquota.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;

import dev.llmquota.client.LlmQuotaCalls;
import dev.llmquota.client.Route;
import dev.llmquota.test.simulator.ProviderSimulator;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The demo's routes profile, scaled down: the batch goes to a route over three simulated
 * deployments of unequal quotas, spreads over them without a refusal, and the smaller
 * spill-over deployment takes calls only when the others would make them wait.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.NONE, properties = { "demo.run-batch=false",
		"demo.rounds=1", "demo.documents=30", "demo.workers=30", "demo.simulator.requests-per-minute=300",
		"demo.simulator.tokens-per-minute=1000000", "demo.simulator.time-to-first-token=50ms",
		"demo.deployments.azure-east.requests-per-minute=300", "demo.deployments.azure-east.tokens-per-minute=1000000",
		"demo.deployments.azure-east.time-to-first-token=50ms", "demo.deployments.azure-sweden.requests-per-minute=300",
		"demo.deployments.azure-sweden.tokens-per-minute=1000000",
		"demo.deployments.azure-sweden.time-to-first-token=50ms" })
@ActiveProfiles({ "demo", "routes" })
class DemoRoutesTests {

	@DynamicPropertySource
	static void ports(DynamicPropertyRegistry registry) {
		int openai = freePort();
		int east = freePort();
		int sweden = freePort();
		registry.add("demo.simulator.port", () -> openai);
		registry.add("demo.deployments.azure-east.port", () -> east);
		registry.add("demo.deployments.azure-sweden.port", () -> sweden);
	}

	@Autowired
	private BatchJob job;

	@Autowired
	private ProviderSimulator simulator;

	@Autowired
	private DemoRoutesConfiguration.Deployments deployments;

	@Autowired
	private LlmQuotaCalls calls;

	@Test
	void theBatchSpreadsOverTheRoutesDeploymentsWithoutARefusal() {
		BatchJob.Result result = this.job.run(true);
		assertThat(result.done()).as("documents summarised: %s", result).isEqualTo(30);
		assertThat(result.refusals()).isZero();
		assertThat(this.simulator.requestLog().refused()).isEmpty();
		this.deployments.simulators()
			.values()
			.forEach((deployment) -> assertThat(deployment.requestLog().refused()).isEmpty());
		Route route = this.calls.routes().get(0);
		// 300 a minute each at 0.8 headroom over a 2 s burst window: the
		// primaries cannot take 30 at once, so the spill-over takes some
		assertThat(route.targets()).allSatisfy((target) -> assertThat(target.taken()).isPositive());
		assertThat(route.targets().stream().mapToLong(Route.Target::taken).sum()).isEqualTo(30);
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
