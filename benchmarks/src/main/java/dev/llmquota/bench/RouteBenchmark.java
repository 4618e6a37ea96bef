package dev.llmquota.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

import dev.llmquota.LlmQuota;
import dev.llmquota.provider.Waits;
import dev.llmquota.test.simulator.ProviderSimulator;
import dev.llmquota.test.simulator.RequestRecord;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Routes: one logical model over three deployments of unequal quotas (each a simulator of
 * its own account, charging a refused call's request as OpenAI documents), offered 1.5
 * times the sum of their quotas, open loop. Three clients in each round: llm-quota's
 * route; a faithful port of LiteLLM Router's defaults (a shuffle weighted by configured
 * rpm; a 429 cools the deployment down for its retry-after, or 5 s when it names none; up
 * to 2 retries on another deployment, at once); and primary with fallback on 429. Goodput
 * is the calls answered per minute as a share of the deployments' quotas x headroom, and
 * refusals are the provider's 429s per 1,000 calls offered. Every figure is the median of
 * the rounds ({@code -Drounds=N}, default 3).
 */
public final class RouteBenchmark {

	private static final String MODEL = "gpt-4o";

	/** The three deployments' requests per minute: unequal, as regions' quotas are. */
	private static final long[] REQUESTS_PER_MINUTE = { 180, 90, 30 };

	private static final double HEADROOM = 0.9;

	private static final double OFFERED = 1.5;

	/** The simulators' enforcement window, and llm-quota's burst window. */
	private static final Duration WINDOW = Duration.ofSeconds(10);

	/** The window and more: what happens after it is measured, not its burst. */
	private static final Duration WARM_UP = Duration.ofSeconds(15);

	/** LiteLLM's default cooldown when a 429 names no wait. */
	private static final Duration LITELLM_COOLDOWN = Duration.ofSeconds(5);

	/** LiteLLM's default retries within a model group. */
	private static final int LITELLM_RETRIES = 2;

	/** How long a call may wait before its caller gives up, for every client. */
	private static final Duration PATIENCE = Duration.ofSeconds(10);

	private RouteBenchmark() {
	}

	/** A client under test: sends one call over the deployments, however it likes. */
	private interface Client extends AutoCloseable {

		String name();

		/** Completes when answered, errors when the client gives up. */
		Mono<Void> send();

		@Override
		default void close() {
		}

	}

	/**
	 * One client's run: calls answered within the measured minutes, calls offered in them
	 * and given up, and the provider's refusals of calls that arrived in them.
	 */
	private record Run(String client, long offered, long answered, long failed, long refused, double minutes,
			long[] perDeployment) {

	}

	static void run(Duration perClient, int rounds, Path results) throws Exception {
		List<ProviderSimulator> deployments = new ArrayList<>();
		try {
			for (long rpm : REQUESTS_PER_MINUTE) {
				deployments.add(ProviderSimulator.builder()
					.host("127.0.0.1")
					.port(0)
					.window(WINDOW)
					.model(MODEL, (limits) -> limits.requestsPerMinute(rpm))
					.latency((latency) -> latency.timeToFirstToken(Duration.ofMillis(200))
						.perOutputToken(Duration.ofMillis(1))
						.fixedOutputTokens(20))
					.start());
			}
			List<List<Run>> all = new ArrayList<>();
			for (int round = 1; round <= rounds; round++) {
				System.out.println("round " + round + " of " + rounds);
				List<Run> runs = new ArrayList<>();
				for (Client client : List.of(llmQuota(deployments), liteLlm(deployments), fallback(deployments))) {
					try (client) {
						deployments.forEach(ProviderSimulator::reset);
						Run run = drive(client, deployments, perClient);
						runs.add(run);
						System.out.println(line(run));
					}
				}
				all.add(runs);
			}
			write(all, perClient, results);
		}
		finally {
			deployments.forEach(ProviderSimulator::close);
		}
	}

	private static Run drive(Client client, List<ProviderSimulator> deployments, Duration duration) {
		double perSecond = OFFERED * Arrays.stream(REQUESTS_PER_MINUTE).sum() / 60.0;
		Duration period = Duration.ofNanos((long) (1e9 / perSecond));
		long start = System.nanoTime();
		long from = start + WARM_UP.toNanos();
		long end = start + duration.toNanos();
		AtomicLong offered = new AtomicLong();
		AtomicLong answered = new AtomicLong();
		AtomicLong failed = new AtomicLong();
		List<Long> simulatorFrom = deployments.stream()
			.map((deployment) -> deployment.clock().nanoTime() + WARM_UP.toNanos())
			.toList();
		Flux.interval(period).take(duration).flatMap((i) -> {
			long sent = System.nanoTime();
			boolean measured = sent >= from;
			if (measured) {
				offered.incrementAndGet();
			}
			return client.send().timeout(PATIENCE.plusSeconds(5)).doOnSuccess((ignored) -> {
				// answered within the measured minutes, whenever sent: the steady rate
				long now = System.nanoTime();
				if (now >= from && now <= end) {
					answered.incrementAndGet();
				}
			}).onErrorResume((ex) -> {
				if (measured) {
					failed.incrementAndGet();
				}
				return Mono.empty();
			});
		}, 10_000).blockLast(duration.plus(PATIENCE).plusSeconds(30));
		long refused = 0;
		long[] perDeployment = new long[deployments.size()];
		for (int i = 0; i < deployments.size(); i++) {
			long logFrom = simulatorFrom.get(i);
			long logTo = logFrom + (end - from);
			List<RequestRecord> log = deployments.get(i).requestLog().records();
			refused += deployments.get(i)
				.requestLog()
				.refused()
				.stream()
				.filter((record) -> record.arrivalNanos() >= logFrom && record.arrivalNanos() <= logTo)
				.count();
			perDeployment[i] = log.stream()
				.filter((record) -> record.arrivalNanos() >= logFrom && record.arrivalNanos() <= logTo
						&& record.outcome() == RequestRecord.Outcome.COMPLETED)
				.count();
		}
		return new Run(client.name(), offered.get(), answered.get(), failed.get(), refused, (end - from) / 60e9,
				perDeployment);
	}

	// --- the clients
	// ---------------------------------------------------------------------

	private static Map<String, Object> body() {
		return Map.of("model", MODEL, "max_tokens", 50, "messages",
				List.of(Map.of("role", "user", "content", "Summarise the quarter in one line.")));
	}

	private static Mono<ClientResponse> post(WebClient client, String url) {
		return client.post()
			.uri(url)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body())
			.exchangeToMono(Mono::just);
	}

	private static String url(ProviderSimulator deployment) {
		return deployment.baseUrl() + "/v1/chat/completions";
	}

	private static Client llmQuota(List<ProviderSimulator> deployments) {
		List<String> properties = new ArrayList<>(
				List.of("spring.main.banner-mode=off", "logging.level.dev.llmquota=ERROR",
						"llm.quota.headroom=" + HEADROOM, "llm.quota.max-wait=" + PATIENCE.toSeconds() + "s"));
		for (int i = 0; i < deployments.size(); i++) {
			String prefix = "llm.quota.providers.d" + i + ".";
			properties.addAll(List.of(prefix + "base-url=" + deployments.get(i).baseUrl(), prefix + "dialect=openai",
					prefix + "burst-window=" + WINDOW.toSeconds() + "s", prefix + "in-flight-gate=false",
					prefix + "models." + MODEL + ".requests-per-minute=" + REQUESTS_PER_MINUTE[i],
					prefix + "models." + MODEL + ".expected-latency=300ms",
					"llm.quota.routes.r.targets[" + i + "].provider=d" + i,
					"llm.quota.routes.r.targets[" + i + "].model=" + MODEL));
		}
		ConfigurableApplicationContext context = new SpringApplicationBuilder(GoodputBenchmark.Governed.class)
			.web(WebApplicationType.NONE)
			.properties(properties.toArray(String[]::new))
			.run();
		WebClient client = context.getBean(WebClient.Builder.class).build();
		String url = LlmQuota.route("r") + "/v1/chat/completions";
		return new Client() {

			@Override
			public String name() {
				return "(a) llm-quota route";
			}

			@Override
			public Mono<Void> send() {
				return post(client, url).flatMap((response) -> response.releaseBody()
					.then((response.statusCode().value() < 400) ? Mono.empty()
							: Mono.error(new IllegalStateException("HTTP " + response.statusCode().value()))));
			}

			@Override
			public void close() {
				context.close();
			}

		};
	}

	/**
	 * LiteLLM Router's defaults, ported: {@code simple-shuffle} picks a deployment at
	 * random weighted by its configured rpm among those not cooling down; a 429 cools
	 * that deployment down for the provider's retry-after (5 s when it names none) and
	 * the call is retried at once on another pick, up to 2 retries; with every deployment
	 * cooling down the call fails.
	 */
	private static Client liteLlm(List<ProviderSimulator> deployments) {
		WebClient client = WebClient.create();
		Map<Integer, Long> cooldownUntil = new ConcurrentHashMap<>();
		return new Client() {

			@Override
			public String name() {
				return "(b) LiteLLM defaults";
			}

			@Override
			public Mono<Void> send() {
				return attempt(0);
			}

			private Mono<Void> attempt(int retries) {
				return Mono.defer(() -> {
					int pick = pick();
					if (pick < 0) {
						return Mono.error(new IllegalStateException("No deployments available"));
					}
					return post(client, url(deployments.get(pick))).flatMap((response) -> {
						int status = response.statusCode().value();
						if (status != 429) {
							return response.releaseBody()
								.then((status < 400) ? Mono.empty()
										: Mono.error(new IllegalStateException("HTTP " + status)));
						}
						Duration wait = Waits.fromHeaders(response.headers().asHttpHeaders()::getFirst, Instant.now());
						cooldownUntil.put(pick,
								System.nanoTime() + ((wait != null) ? wait : LITELLM_COOLDOWN).toNanos());
						return response.releaseBody()
							.then((retries < LITELLM_RETRIES) ? attempt(retries + 1)
									: Mono.error(new IllegalStateException("429 after retries")));
					});
				});
			}

			private int pick() {
				long now = System.nanoTime();
				long total = 0;
				for (int i = 0; i < deployments.size(); i++) {
					total += cooling(i, now) ? 0 : REQUESTS_PER_MINUTE[i];
				}
				if (total == 0) {
					return -1;
				}
				long draw = ThreadLocalRandom.current().nextLong(total);
				for (int i = 0; i < deployments.size(); i++) {
					if (cooling(i, now)) {
						continue;
					}
					draw -= REQUESTS_PER_MINUTE[i];
					if (draw < 0) {
						return i;
					}
				}
				return -1;
			}

			private boolean cooling(int deployment, long now) {
				Long until = cooldownUntil.get(deployment);
				return until != null && until > now;
			}

		};
	}

	/** The largest deployment first; on a 429 the next, in order; then the call fails. */
	private static Client fallback(List<ProviderSimulator> deployments) {
		WebClient client = WebClient.create();
		return new Client() {

			@Override
			public String name() {
				return "(c) primary, fallback on 429";
			}

			@Override
			public Mono<Void> send() {
				return attempt(0);
			}

			private Mono<Void> attempt(int deployment) {
				return post(client, url(deployments.get(deployment))).flatMap((response) -> {
					int status = response.statusCode().value();
					if (status == 429 && deployment + 1 < deployments.size()) {
						return response.releaseBody().then(attempt(deployment + 1));
					}
					return response.releaseBody()
						.then((status < 400) ? Mono.empty() : Mono.error(new IllegalStateException("HTTP " + status)));
				});
			}

		};
	}

	// --- the report
	// ---------------------------------------------------------------------

	/** Goodput as a share of the quotas x headroom, refusals per 1,000, calls lost. */
	private static double[] figures(Run run) {
		double quota = Arrays.stream(REQUESTS_PER_MINUTE).sum() * HEADROOM;
		double perMinute = run.answered() / run.minutes();
		return new double[] { perMinute, perMinute / quota,
				(run.offered() > 0) ? 1000.0 * run.refused() / run.offered() : 0,
				(run.offered() > 0) ? (double) run.failed() / run.offered() : 0, run.perDeployment()[0] / run.minutes(),
				run.perDeployment()[1] / run.minutes(), run.perDeployment()[2] / run.minutes() };
	}

	private static String header() {
		return String.format(Locale.ROOT, "%-30s %10s %9s %13s %9s %24s", "client", "answered/m", "goodput",
				"refused/1000", "gave up", "served/m per deployment");
	}

	private static String line(String client, double[] f) {
		return String.format(Locale.ROOT, "%-30s %10.1f %9.2f %13.1f %9.2f %8.1f %7.1f %7.1f", client, f[0], f[1], f[2],
				f[3], f[4], f[5], f[6]);
	}

	private static String line(Run run) {
		return line(run.client(), figures(run));
	}

	private static void write(List<List<Run>> rounds, Duration perClient, Path results) throws IOException {
		int clients = rounds.get(0).size();
		StringBuilder table = new StringBuilder();
		table.append(String.format(Locale.ROOT,
				"Routes, median of %d rounds, %d s per client, measured after the first %d s; three deployments of %d, %d"
						+ " and %d requests per minute (each its own simulated account over a %d s window, a refused call's"
						+ " request charged, as OpenAI documents), offered %.1f x their sum open loop; headroom %.2f;"
						+ " a caller gives up after %d s; goodput = answered per minute / (sum of quotas x headroom)%n%n",
				rounds.size(), perClient.toSeconds(), WARM_UP.toSeconds(), REQUESTS_PER_MINUTE[0],
				REQUESTS_PER_MINUTE[1], REQUESTS_PER_MINUTE[2], WINDOW.toSeconds(), OFFERED, HEADROOM,
				PATIENCE.toSeconds()));
		table.append(header()).append('\n');
		List<double[]> medians = new ArrayList<>();
		for (int c = 0; c < clients; c++) {
			List<double[]> perRound = new ArrayList<>();
			for (List<Run> runs : rounds) {
				perRound.add(figures(runs.get(c)));
			}
			double[] median = Benchmarks.medians(perRound);
			medians.add(median);
			table.append(line(rounds.get(0).get(c).client(), median)).append('\n');
		}
		double[] llmQuota = medians.get(0);
		table.append(String.format(Locale.ROOT,
				"%nllm-quota's route: %.2f of the quotas x headroom (target: at least 0.9: %s), %.1f refusals per 1,000"
						+ " calls (target: below 1: %s)%n",
				llmQuota[1], (llmQuota[1] >= 0.9) ? "met" : "not met", llmQuota[2],
				(llmQuota[2] < 1) ? "met" : "not met"));
		Files.createDirectories(results);
		Files.writeString(results.resolve("routes.txt"), table.toString());
		System.out.println();
		System.out.print(table);
	}

}
