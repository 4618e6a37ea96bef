package dev.llmquota.sample;

import java.time.Duration;

import dev.llmquota.test.simulator.ProviderSimulator;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;

/**
 * The demo profile's provider: the simulator, in-process on loopback, with the seeds'
 * account (500 requests and 200,000 tokens per minute, OpenAI's combined pool: input plus
 * {@code max_tokens} at admission) enforced over a 10-second window, as a real provider's
 * would be.
 */
@Configuration(proxyBeanMethods = false)
@Profile("demo")
class DemoSimulatorConfiguration {

	@Bean(destroyMethod = "close")
	ProviderSimulator providerSimulator(DemoProperties properties) {
		return start(properties.getModel(), properties.getSimulator());
	}

	/** Starts one simulated account of the demo's model with the given settings. */
	static ProviderSimulator start(String model, DemoProperties.Simulator simulator) {
		return ProviderSimulator.builder()
			.host("127.0.0.1")
			.port(simulator.getPort())
			.window(Duration.ofSeconds(10))
			.model(model,
					(limits) -> limits.requestsPerMinute(simulator.getRequestsPerMinute())
						.tokensPerMinute(simulator.getTokensPerMinute()))
			.latency((latency) -> latency.timeToFirstToken(simulator.getTimeToFirstToken())
				.perOutputToken(Duration.ofMillis(5))
				.outputShare(0.05, 0.3)
				.seed(42))
			.start();
	}

}
