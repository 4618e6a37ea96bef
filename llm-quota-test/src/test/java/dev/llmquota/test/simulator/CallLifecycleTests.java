package dev.llmquota.test.simulator;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.llmquota.test.simulator.RequestRecord.Outcome;
import dev.llmquota.test.simulator.clock.ManualSimClock;
import dev.llmquota.test.simulator.dialect.Dialect;
import dev.llmquota.test.simulator.dialect.Dialects;
import dev.llmquota.test.simulator.quota.Dimension;
import dev.llmquota.test.simulator.quota.Limits;
import dev.llmquota.test.simulator.quota.QuotaBook;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What happens to one admitted call from admission to its last byte: drops, failures,
 * output length and when its slot is given back.
 */
class CallLifecycleTests {

	private final ManualSimClock clock = new ManualSimClock();

	private ProviderSimulator simulator;

	@AfterEach
	void stop() {
		if (this.simulator != null) {
			this.simulator.close();
		}
	}

	@Test
	void dropsANonStreamedAnswerAfterItsHeadersAndPartOfItsBody() throws Exception {
		this.simulator = ProviderSimulator.builder()
			.clock(this.clock)
			.latency((latency) -> latency.fixedOutputTokens(50))
			.start();
		this.simulator.faults().next(Fault.DROP_MID_STREAM);
		HttpResponse<InputStream> response = SimHttp
			.open(this.simulator, "/v1/chat/completions", SimHttp.openAi("gpt-4o", 100, false))
			.join();
		assertThat(response.statusCode()).isEqualTo(200);
		long length = Long.parseLong(response.headers().firstValue("content-length").orElseThrow());
		assertThat(length).isGreaterThan(100);
		long received = 0;
		try (InputStream body = response.body()) {
			received = body.readAllBytes().length;
		}
		catch (IOException ex) {
			// a premature close is what a client sees when the provider drops
			// the connection
			received = -1;
		}
		assertThat(received).isLessThan(length);
		await().atMost(Duration.ofSeconds(5)).until(() -> this.simulator.requestLog().size() == 1);
		assertThat(this.simulator.requestLog().records().get(0).outcome()).isEqualTo(Outcome.DROPPED);
	}

	@Test
	void givesTheSlotBackWhenAnsweringFailsRightAfterAdmission() {
		AtomicBoolean failNext = new AtomicBoolean(true);
		List<Dialect> dialects = Dialects.all()
			.stream()
			.map((dialect) -> "openai".equals(dialect.id()) ? failingHeaders(dialect, failNext) : dialect)
			.toList();
		QuotaBook book = new QuotaBook(this.clock, Duration.ofMinutes(1), ZoneOffset.UTC, Limits.unlimited(),
				Map.of("gpt-4o", Limits.builder().concurrentRequests(1).build()), Limits.unlimited());
		SimulatorState state = new SimulatorState(this.clock, dialects, Map.of(), book, LatencyModel.none(),
				new FaultPlan(42), true, false, Map.of());
		this.simulator = new ProviderSimulator(state, "127.0.0.1", 0, () -> {
		}, false);
		assertThat(
				SimHttp.post(this.simulator, "/v1/chat/completions", SimHttp.openAi("gpt-4o", 10, false)).statusCode())
			.isEqualTo(500);
		assertThat(this.simulator.remaining("gpt-4o", Dimension.CONCURRENT_REQUESTS)).isEqualTo(1);
		assertThat(
				SimHttp.post(this.simulator, "/v1/chat/completions", SimHttp.openAi("gpt-4o", 10, false)).statusCode())
			.isEqualTo(200);
	}

	private static Dialect failingHeaders(Dialect delegate, AtomicBoolean failNext) {
		return (Dialect) Proxy.newProxyInstance(CallLifecycleTests.class.getClassLoader(),
				new Class<?>[] { Dialect.class }, (proxy, method, args) -> {
					if ("successHeaders".equals(method.getName()) && failNext.getAndSet(false)) {
						throw new IllegalStateException("simulated failure after admission");
					}
					try {
						return method.invoke(delegate, args);
					}
					catch (InvocationTargetException ex) {
						throw ex.getCause();
					}
				});
	}

	@Test
	void capsGeneratedOutputWhateverTheCeiling() {
		this.simulator = ProviderSimulator.builder()
			.clock(this.clock)
			.latency((latency) -> latency.outputShare(1.0, 1.0))
			.start();
		HttpResponse<String> large = SimHttp.post(this.simulator, "/v1/chat/completions",
				SimHttp.openAi("gpt-4o", 1_000_000, false));
		assertThat(SimHttp.json(large).at("/usage/completion_tokens").asLong()).isEqualTo(32_768);
		HttpResponse<String> huge = SimHttp.post(this.simulator, "/v1/chat/completions",
				"{\"model\":\"gpt-4o\",\"max_tokens\":9000000000000000000,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
		assertThat(SimHttp.json(huge).at("/usage/completion_tokens").asLong()).isEqualTo(32_768);
	}

	@Test
	void slotIsFreeByTheTimeTheClientReadsTheFinalFrame() throws IOException {
		this.simulator = ProviderSimulator.builder()
			.clock(this.clock)
			.model("gpt-4o", (limits) -> limits.concurrentRequests(1))
			.latency((latency) -> latency.timeToFirstToken(Duration.ofSeconds(1)).fixedOutputTokens(30))
			.start();
		for (int i = 0; i < 50; i++) {
			HttpResponse<InputStream> response = SimHttp
				.open(this.simulator, "/v1/chat/completions", SimHttp.openAi("gpt-4o", 100, true))
				.join();
			assertThat(response.statusCode()).as("call %d", i).isEqualTo(200);
			this.clock.advance(Duration.ofSeconds(1));
			try (BufferedReader reader = new BufferedReader(
					new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
				String line = reader.readLine();
				while (line != null && !line.equals("data: [DONE]")) {
					line = reader.readLine();
				}
				assertThat(line).isNotNull();
				assertThat(this.simulator.remaining("gpt-4o", Dimension.CONCURRENT_REQUESTS)).as("call %d", i)
					.isEqualTo(1);
			}
		}
	}

	@Test
	void aCallIsInTheLogByTheTimeItsCallerHasReadTheWholeAnswer() {
		this.simulator = ProviderSimulator.builder().latency((latency) -> latency.fixedOutputTokens(5)).start();
		for (int i = 0; i < 200; i++) {
			boolean stream = i % 2 == 1;
			HttpResponse<String> response = SimHttp.post(this.simulator, "/v1/chat/completions",
					SimHttp.openAi("gpt-4o", 10, stream));
			assertThat(response.statusCode()).as("call %d", i).isEqualTo(200);
			assertThat(this.simulator.requestLog().size()).as("logged after call %d", i).isEqualTo(i + 1);
			RequestRecord last = this.simulator.requestLog().records().get(i);
			assertThat(last.outcome()).as("call %d", i).isEqualTo(Outcome.COMPLETED);
			assertThat(last.stream()).isEqualTo(stream);
		}
	}

}
