package dev.llmquota.test.junit;

import java.util.ArrayList;
import java.util.List;

import dev.llmquota.test.simulator.ProviderSimulator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On an instance field the extension starts a fresh simulator for each test and stops it
 * after.
 */
class ProviderSimulatorExtensionPerTestTests {

	private static final List<ProviderSimulator> seen = new ArrayList<>();

	@RegisterExtension
	final ProviderSimulatorExtension extension = new ProviderSimulatorExtension();

	@AfterAll
	static void eachTestHadItsOwnSimulator() {
		assertThat(seen).hasSize(2).doesNotHaveDuplicates();
	}

	@RepeatedTest(2)
	void startsOnePerTest(ProviderSimulator simulator) throws Exception {
		assertThat(this.extension.simulator()).isSameAs(simulator);
		assertThat(ProviderSimulatorExtensionTests.call(simulator)).isEqualTo(200);
		seen.add(simulator);
	}

}
