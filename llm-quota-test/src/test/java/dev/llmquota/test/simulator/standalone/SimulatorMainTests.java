package dev.llmquota.test.simulator.standalone;

import java.io.IOException;
import java.io.StringReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.llmquota.test.simulator.Fault;
import dev.llmquota.test.simulator.ProviderSimulator;
import dev.llmquota.test.simulator.RequestRecord;
import dev.llmquota.test.simulator.clock.ManualSimClock;
import dev.llmquota.test.simulator.quota.Dimension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

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

	private static final String BODY = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

	private static final HttpClient CLIENT = HttpClient.newHttpClient();

	private final ManualSimClock clock = new ManualSimClock();

	private final List<Double> scales = new ArrayList<>();

	private ProviderSimulator start(String... args) throws IOException {
		return SimulatorMain.start((scale) -> {
			this.scales.add(scale);
			return this.clock;
		}, args);
	}

	private static CompletableFuture<HttpResponse<String>> call(ProviderSimulator simulator) {
		return CLIENT.sendAsync(HttpRequest.newBuilder(URI.create(simulator.baseUrl() + "/v1/chat/completions"))
			.POST(HttpRequest.BodyPublishers.ofString(BODY))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	@Test
	void startsFromYamlWithTheCommandLinePortAndTimeScale(@TempDir Path dir) throws Exception {
		Path config = dir.resolve("sim.yml");
		Files.writeString(config, YAML);
		try (ProviderSimulator simulator = start("--port", "0", "--config", config.toString(), "--time-scale", "600")) {
			assertThat(this.scales).containsExactly(600.0);
			assertThat(simulator.baseUrl()).startsWith("http://127.0.0.1:");
			CompletableFuture<HttpResponse<String>> call = call(simulator);
			// the YAML's latency: 10 ms to the first token, then 1 ms per output token
			await().atMost(Duration.ofSeconds(5)).until(() -> this.clock.pendingWaits() == 1);
			this.clock.advance(Duration.ofMillis(9));
			assertThat(this.clock.pendingWaits()).isEqualTo(1);
			this.clock.advance(Duration.ofSeconds(1));
			HttpResponse<String> response = call.join();
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.headers().firstValue("x-ratelimit-limit-requests")).hasValue("6");
			// a 10 s window holds a sixth of the minute: one request, and none is left
			assertThat(response.headers().firstValue("x-ratelimit-remaining-requests")).hasValue("0");
			assertThat(simulator.states("gpt-4o").get(Dimension.REQUESTS_PER_MINUTE).limit()).isEqualTo(6);
			assertThat(simulator.states("some-other-model").get(Dimension.REQUESTS_PER_MINUTE).limit()).isEqualTo(100);
			await().atMost(Duration.ofSeconds(5)).until(() -> simulator.requestLog().size() == 1);
			RequestRecord record = simulator.requestLog().records().get(0);
			assertThat(record.maxTokens()).isEqualTo(512);
			// output-share [0.2, 0.4] of the default ceiling of 512
			assertThat(record.outputTokens()).isBetween(102L, 205L);
		}
	}

	@Test
	void takesTheTimeScaleFromYamlWhenTheCommandLineHasNone(@TempDir Path dir) throws Exception {
		Path config = dir.resolve("sim.yml");
		Files.writeString(config, YAML);
		try (ProviderSimulator simulator = start("--config", config.toString(), "--port", "0")) {
			assertThat(this.scales).containsExactly(60.0);
			assertThat(simulator.clock()).isSameAs(this.clock);
		}
	}

	@Test
	void appliesFaultsFromYaml(@TempDir Path dir) throws Exception {
		Path config = dir.resolve("sim.yml");
		Files.writeString(config, """
				port: 0
				faults:
				  server-error-rate: 1.0
				  header-delay: 1s
				""");
		try (ProviderSimulator simulator = start("--config", config.toString())) {
			assertThat(call(simulator).join().statusCode()).isEqualTo(500);
			simulator.faults().next(Fault.DELAY_HEADERS);
			CompletableFuture<HttpResponse<String>> delayed = call(simulator);
			await().atMost(Duration.ofSeconds(5)).until(() -> this.clock.pendingWaits() == 1);
			this.clock.advance(Duration.ofMillis(999));
			assertThat(this.clock.pendingWaits()).isEqualTo(1);
			this.clock.advance(Duration.ofMillis(1));
			assertThat(delayed.join().statusCode()).isEqualTo(200);
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
