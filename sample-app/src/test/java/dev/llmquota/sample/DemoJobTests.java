package dev.llmquota.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;

import dev.llmquota.test.simulator.ProviderSimulator;
import dev.llmquota.test.simulator.RequestRecord;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The demo's batch, scaled down, against the embedded simulator: without llm-quota the
 * provider refuses calls; with it, none, and every document is summarised.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "demo.run-batch=false", "demo.rounds=1", "demo.documents=16", "demo.workers=16",
				"demo.simulator.requests-per-minute=300", "demo.simulator.tokens-per-minute=30000",
				"demo.simulator.time-to-first-token=50ms" })
@ActiveProfiles("demo")
class DemoJobTests {

	private static final int SIMULATOR_PORT = freePort();

	@DynamicPropertySource
	static void simulatorPort(DynamicPropertyRegistry registry) {
		registry.add("demo.simulator.port", () -> SIMULATOR_PORT);
	}

	@Autowired
	private BatchJob job;

	@Autowired
	private ProviderSimulator simulator;

	@Test
	void theGovernedBatchMeetsNoRefusalWhereTheUngovernedOneMeetsMany() {
		BatchJob.Result without = this.job.run(false);
		assertThat(without.refusals()).as("rate limits the ungoverned batch met: %s", without).isPositive();
		assertThat(this.simulator.requestLog().refused()).isNotEmpty();

		this.simulator.reset();
		BatchJob.Result with = this.job.run(true);
		assertThat(with.done()).as("documents summarised").isEqualTo(16);
		assertThat(with.failed()).isZero();
		assertThat(with.refusals()).as("rate limits the governed batch met").isZero();
		assertThat(this.simulator.requestLog().refused()).as("the provider refused nothing").isEmpty();
		long billed = this.simulator.requestLog()
			.records()
			.stream()
			.filter((record) -> record.outcome() == RequestRecord.Outcome.COMPLETED)
			.mapToLong((record) -> record.inputTokens() + record.outputTokens())
			.sum();
		assertThat(with.tokensDone()).as("the headline counts the tokens the provider billed").isEqualTo(billed);
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
