package dev.llmquota.sample;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.llmquota.test.simulator.ProviderSimulator;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;

/**
 * The routes profile's further deployments: one simulator per entry of
 * {@code demo.deployments}, each its own account with its own limits, beside the demo
 * profile's; the batch's calls go to the route over all of them.
 */
@Configuration(proxyBeanMethods = false)
@Profile("routes")
class DemoRoutesConfiguration {

	@Bean(destroyMethod = "close")
	Deployments demoDeployments(DemoProperties properties) {
		Map<String, ProviderSimulator> started = new LinkedHashMap<>();
		properties.getDeployments()
			.forEach((id, simulator) -> started.put(id,
					DemoSimulatorConfiguration.start(properties.getModel(), simulator)));
		return new Deployments(started);
	}

	/**
	 * The further deployments, by provider entry id.
	 *
	 * @param simulators their simulators
	 */
	record Deployments(Map<String, ProviderSimulator> simulators) implements AutoCloseable {

		@Override
		public void close() {
			this.simulators.values().forEach(ProviderSimulator::close);
		}

		void reset() {
			this.simulators.values().forEach(ProviderSimulator::reset);
		}

	}

}
