package dev.llmquota.test.simulator.standalone;

import java.io.IOException;
import java.io.StringReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;

import dev.llmquota.test.simulator.ProviderSimulator;
import dev.llmquota.test.simulator.quota.Dimension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The standalone start: YAML configuration and command-line options.
 */
class SimulatorMainTests {

	private static final String YAML = """
			port: 0
			time-scale: 60
			window: 10s
			account:
			  tokens-per-minute: 1000000
			models:
			  gpt-4o:
			    requests-per-minute: 6
			    tokens-per-minute: 30000
			    default-max-tokens: 512
			  default:
			    requests-per-minute: 100
			dialects:
			  anthropic:
			    reserve-max-tokens: true
			latency:
			  time-to-first-token: 10ms
			  per-output-token: 1ms
			  output-share: [0.2, 0.4]
			shared-team:
			  model: gpt-4o
			  tokens-per-minute: 6000
			faults:
			  server-error-rate: 0.0
			  header-delay: 1s
			""";

	@Test
	void startsFromYamlWithTheCommandLinePortAndTimeScale(@TempDir Path dir) throws Exception {
		Path config = dir.resolve("sim.yml");
		Files.writeString(config, YAML);
		try (ProviderSimulator simulator = SimulatorMain.start("--port", "0", "--config", config.toString(),
				"--time-scale", "600")) {
			assertThat(simulator.baseUrl()).startsWith("http://127.0.0.1:");
			HttpResponse<String> response = HttpClient.newHttpClient()
				.send(HttpRequest.newBuilder(URI.create(simulator.baseUrl() + "/v1/chat/completions"))
					.POST(HttpRequest.BodyPublishers
						.ofString("{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"))
					.build(), HttpResponse.BodyHandlers.ofString());
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.headers().firstValue("x-ratelimit-limit-requests")).hasValue("6");
			// a 10 s window holds a sixth of the minute: one request here
			assertThat(simulator.states("gpt-4o").get(Dimension.REQUESTS_PER_MINUTE).limit()).isEqualTo(6);
			assertThat(simulator.states("some-other-model").get(Dimension.REQUESTS_PER_MINUTE).limit()).isEqualTo(100);
		}
	}

	@Test
	void rejectsUnknownKeysNamingThem() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> SimulatorConfig.parse(new StringReader("models:\n  gpt-4o:\n    tokens-per-hour: 5\n")))
			.withMessageContaining("models.gpt-4o.tokens-per-hour");
		assertThatIllegalArgumentException().isThrownBy(() -> SimulatorConfig.parse(new StringReader("prot: 1\n")))
			.withMessageContaining("unknown key 'prot'");
		assertThatIllegalArgumentException().isThrownBy(() -> SimulatorConfig.parse(new StringReader("window: soon\n")))
			.withMessageContaining("window");
	}

	@Test
	void rejectsUnknownOptions() {
		assertThatIllegalArgumentException().isThrownBy(() -> SimulatorMain.start("--prot", "1"))
			.withMessageContaining("--prot");
	}

	@Test
	void parsesDurations() throws IOException {
		assertThat(SimulatorConfig.duration("300ms", "k")).hasMillis(300);
		assertThat(SimulatorConfig.duration("1.5s", "k")).hasMillis(1500);
		assertThat(SimulatorConfig.duration("2m", "k")).hasSeconds(120);
		assertThat(SimulatorConfig.duration("PT10S", "k")).hasSeconds(10);
	}

}
