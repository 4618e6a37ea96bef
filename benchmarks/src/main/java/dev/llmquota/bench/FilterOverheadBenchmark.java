package dev.llmquota.bench;

import java.time.Duration;
import java.util.Collection;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * What llm-quota's filter adds to a call: a loopback round trip to a server that answers
 * a fixed Chat Completions body at once, through a plain {@code WebClient} and through
 * one built from Spring Boot's builder with llm-quota governing it (limits no call
 * reaches).
 */
public class FilterOverheadBenchmark {

	private static final String ANSWER = "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"model\":\"model\","
			+ "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"ok\"},\"finish_reason\":\"stop\"}],"
			+ "\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":1,\"total_tokens\":13}}";

	private static final Map<String, Object> BODY = Map.of("model", "model", "max_tokens", 16, "messages",
			java.util.List.of(Map.of("role", "user", "content", "Say ok.")));

	/** The server and both clients. */
	@State(Scope.Benchmark)
	public static class Clients {

		DisposableServer server;

		ConfigurableApplicationContext context;

		WebClient plain;

		WebClient governed;

		String url;

		@Setup(Level.Trial)
		public void start() {
			this.server = HttpServer.create()
				.host("127.0.0.1")
				.port(0)
				.route((routes) -> routes.post("/v1/chat/completions", (request, response) -> request.receive()
					.then()
					.then(response.header("content-type", "application/json").sendString(Mono.just(ANSWER)).then())))
				.bindNow();
			String base = "http://127.0.0.1:" + this.server.port();
			this.url = base + "/v1/chat/completions";
			String prefix = "llm.quota.providers.local.";
			this.context = new SpringApplicationBuilder(GoodputBenchmark.Governed.class).web(WebApplicationType.NONE)
				.properties("spring.main.banner-mode=off", "logging.level.root=WARN", prefix + "base-url=" + base,
						prefix + "dialect=openai", prefix + "models.model.requests-per-minute=1000000000",
						prefix + "models.model.tokens-per-minute=1000000000000")
				.run();
			this.plain = WebClient.create();
			this.governed = this.context.getBean(WebClient.Builder.class).build();
		}

		@TearDown(Level.Trial)
		public void stop() {
			this.context.close();
			this.server.disposeNow(Duration.ofSeconds(5));
		}

	}

	@Benchmark
	@BenchmarkMode(Mode.AverageTime)
	@OutputTimeUnit(TimeUnit.MICROSECONDS)
	public String plainRoundTrip(Clients clients) {
		return call(clients.plain, clients.url);
	}

	@Benchmark
	@BenchmarkMode(Mode.AverageTime)
	@OutputTimeUnit(TimeUnit.MICROSECONDS)
	public String governedRoundTrip(Clients clients) {
		return call(clients.governed, clients.url);
	}

	private static String call(WebClient client, String url) {
		return client.post()
			.uri(url)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(BODY)
			.retrieve()
			.bodyToMono(String.class)
			.block();
	}

	/**
	 * Runs the comparison.
	 * @return the result, as a line of text
	 * @throws Exception if the run fails
	 */
	static String run() throws Exception {
		Collection<RunResult> runs = new Runner(
				AdmissionBenchmark.options(FilterOverheadBenchmark.class.getName() + "\\.").threads(1).build())
			.run();
		double plain = Double.NaN;
		double governed = Double.NaN;
		for (RunResult run : runs) {
			if (run.getParams().getBenchmark().endsWith("plainRoundTrip")) {
				plain = run.getPrimaryResult().getScore();
			}
			else {
				governed = run.getPrimaryResult().getScore();
			}
		}
		return String.format(Locale.ROOT,
				"Filter overhead: a loopback round trip takes %.0f us through a plain WebClient and %.0f us through"
						+ " llm-quota's filter: %.0f us more, %.1f%% of the round trip%n",
				plain, governed, governed - plain, 100 * (governed - plain) / plain);
	}

}
