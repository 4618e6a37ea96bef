package dev.llmquota.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

import dev.llmquota.LlmQuota;
import dev.llmquota.core.Priority;
import dev.llmquota.provider.Waits;
import dev.llmquota.test.simulator.ProviderSimulator;
import dev.llmquota.test.simulator.RequestRecord;
import dev.llmquota.test.simulator.quota.Dimension;
import dev.llmquota.test.simulator.quota.DimensionState;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.reactor.ratelimiter.operator.RateLimiterOperator;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Part 1: goodput. One workload, one simulator configuration, five clients one after
 * another in one round: llm-quota; a naive client that retries 429s after the provider's
 * wait (as the SDKs do); a requests-per-minute limiter (Resilience4j) plus that retry; an
 * input-tokens-per-minute limiter that reserves no output (Bucket4j) plus that retry; and
 * an oracle that reads the simulator's own buckets. The simulator charges a refused
 * call's request, as OpenAI does. Three rounds (or {@code -Drounds=N}); every figure
 * reported is the median of the rounds, and goodput is a ratio to the oracle within each
 * round, since the machine is shared and noisy.
 */
public final class GoodputBenchmark {

	private static final String MODEL = "gpt-4o-mini";

	/** The simulated account, enforced over a 10-second window. */
	private static final long REQUESTS_PER_MINUTE = 300;

	private static final long INPUT_TOKENS_PER_MINUTE = 90_000;

	private static final long OUTPUT_TOKENS_PER_MINUTE = 30_000;

	/** Short interactive calls: ~1,200 input tokens, max_tokens 600. */
	private static final Call INTERACTIVE = new Call(Priority.INTERACTIVE, 1_200, 600);

	/** Long batch documents: ~28,000 tokens scaled to these limits, max_tokens 4096. */
	private static final Call BATCH = new Call(Priority.BATCH, 6_000, 4_096);

	private static final int INTERACTIVE_WORKERS = 6;

	private static final int BATCH_WORKERS = 24;

	private static final double HEADROOM = 0.95;

	/** The simulator's enforcement window. */
	private static final Duration WINDOW = Duration.ofSeconds(10);

	/**
	 * The provider's window and more: what happens after it is measured, not its burst.
	 */
	private static final Duration WARM_UP = Duration.ofSeconds(15);

	private record Call(Priority priority, int inputTokens, int maxTokens) {

		String prompt() {
			// one token a word for the simulator's tokenizer
			return "word ".repeat(this.inputTokens - 8);
		}

	}

	/** What one call came to. */
	private record Done(Priority priority, long finishedNanos, long latencyNanos, int inputTokens) {

	}

	/** A client under test: sends one call, however it likes, until it is answered. */
	private interface Client extends AutoCloseable {

		String name();

		Mono<Void> send(Call call);

		@Override
		default void close() {
		}

	}

	/**
	 * One client's run.
	 *
	 * @param taken input tokens of the answered calls the provider took in during the
	 * measured stretch (by their arrival at the provider): what its input bucket bounds
	 */
	private record Run(String client, List<Done> done, long refused, long arrivals, long taken, long startNanos,
			long endNanos) {

		long calls(Priority priority) {
			return this.done.stream().filter((done) -> done.priority() == priority).count();
		}

		double minutes() {
			return (this.endNanos - this.startNanos) / 60e9;
		}

		double callsPerMinute() {
			return this.done.size() / minutes();
		}

		double inputPerMinute() {
			return this.done.stream().mapToLong(Done::inputTokens).sum() / minutes();
		}

		double takenPerMinute() {
			return this.taken / minutes();
		}

		double refusalsPerThousand() {
			return (this.arrivals > 0) ? 1000.0 * this.refused / this.arrivals : 0;
		}

		/**
		 * The latency of one class at a quantile, in ms; -1 when none of it completed.
		 */
		long latency(Priority priority, double quantile) {
			List<Long> latencies = new ArrayList<>(
					this.done.stream().filter((done) -> done.priority() == priority).map(Done::latencyNanos).toList());
			if (latencies.isEmpty()) {
				return -1;
			}
			Collections.sort(latencies);
			return latencies.get((int) Math.min(latencies.size() - 1, Math.floor(quantile * latencies.size())))
					/ 1_000_000;
		}

	}

	private GoodputBenchmark() {
	}

	/**
	 * Runs part 1.
	 * @param perClient how long each client runs
	 * @param results where the table and the chart go
	 * @throws Exception if the run fails
	 */
	static void run(Duration perClient, int rounds, Path results) throws Exception {
		List<List<Run>> all = new ArrayList<>();
		try (ProviderSimulator simulator = ProviderSimulator.builder()
			.host("127.0.0.1")
			.port(0)
			.window(WINDOW)
			.model(MODEL,
					(limits) -> limits.requestsPerMinute(REQUESTS_PER_MINUTE)
						.inputTokensPerMinute(INPUT_TOKENS_PER_MINUTE)
						.outputTokensPerMinute(OUTPUT_TOKENS_PER_MINUTE))
			.latency((latency) -> latency.timeToFirstToken(Duration.ofMillis(300))
				.perOutputToken(Duration.ofMillis(2))
				.outputShare(0.04, 0.12)
				.seed(7))
			.start()) {
			String url = simulator.baseUrl() + "/v1/chat/completions";
			for (int round = 1; round <= rounds; round++) {
				System.out.println("round " + round + " of " + rounds);
				System.out.println(header());
				List<Run> runs = new ArrayList<>();
				for (Client client : List.of(llmQuota(simulator.baseUrl(), url), naive(url), requestsLimiter(url),
						tokensLimiter(url), oracle(simulator, url))) {
					try (client) {
						simulator.reset();
						runs.add(drive(client, simulator, perClient));
					}
					Run run = runs.get(runs.size() - 1);
					System.out.println(line(run.client(), figures(run, run)));
				}
				all.add(runs);
			}
		}
		write(all, perClient, results);
	}

	private static Run drive(Client client, ProviderSimulator simulator, Duration duration) {
		ConcurrentLinkedQueue<Done> done = new ConcurrentLinkedQueue<>();
		AtomicInteger errors = new AtomicInteger();
		long start = System.nanoTime();
		long simulatorStart = simulator.clock().nanoTime();
		long end = start + duration.toNanos();
		List<Flux<Void>> workers = new ArrayList<>();
		for (int i = 0; i < INTERACTIVE_WORKERS + BATCH_WORKERS; i++) {
			Call call = (i < INTERACTIVE_WORKERS) ? INTERACTIVE : BATCH;
			// closed loop: each worker sends its next call when the last one is answered
			workers.add(Mono.defer(() -> {
				long sent = System.nanoTime();
				return client.send(call).doOnSuccess((ignored) -> {
					long now = System.nanoTime();
					if (now <= end) {
						done.add(new Done(call.priority(), now, now - sent, call.inputTokens()));
					}
				});
			}).onErrorResume((ex) -> {
				if (errors.getAndIncrement() == 0) {
					System.err.println(client.name() + ": a call failed (later failures are only counted): " + ex);
				}
				return Mono.empty();
			}).repeat(() -> System.nanoTime() < end).then().flux());
		}
		Flux.merge(workers).take(duration.plusSeconds(30)).blockLast();
		// measured after the warm-up: the full window at the start would flatter everyone
		long from = start + WARM_UP.toNanos();
		long logFrom = simulatorStart + WARM_UP.toNanos();
		long logEnd = simulatorStart + duration.toNanos();
		// what arrived at the provider in the measured stretch
		Predicate<RequestRecord> measured = (record) -> record.arrivalNanos() >= logFrom
				&& record.arrivalNanos() < logEnd;
		List<RequestRecord> log = simulator.requestLog().records().stream().filter(measured).toList();
		long refused = simulator.requestLog().refused().stream().filter(measured).count();
		long taken = log.stream()
			.filter((record) -> record.outcome() == RequestRecord.Outcome.COMPLETED
					|| record.outcome() == RequestRecord.Outcome.DROPPED)
			.mapToLong(RequestRecord::inputTokens)
			.sum();
		return new Run(client.name(), done.stream().filter((call) -> call.finishedNanos() >= from).toList(), refused,
				log.size(), taken, from, end);
	}

	// --- the clients
	// ---------------------------------------------------------------------

	private static Mono<ClientResponse> post(WebClient client, String url, Call call) {
		Map<String, Object> body = Map.of("model", MODEL, "max_tokens", call.maxTokens(), "messages",
				List.of(Map.of("role", "user", "content", call.prompt())));
		return client.post()
			.uri(url)
			.contentType(MediaType.APPLICATION_JSON)
			.attribute(LlmQuota.PRIORITY, call.priority())
			.bodyValue(body)
			.exchangeToMono(Mono::just);
	}

	/**
	 * Sends until answered; a 429 waits as the official OpenAI SDKs wait: the provider's
	 * {@code retry-after(-ms)} when it sends one, else an exponential backoff from 0.5 s,
	 * doubling to at most 8 s, less up to a quarter at random.
	 */
	private static Mono<Void> untilAnswered(WebClient client, String url, Call call, Mono<Void> beforeEachAttempt) {
		return untilAnswered(client, url, call, beforeEachAttempt, 0);
	}

	private static Mono<Void> untilAnswered(WebClient client, String url, Call call, Mono<Void> beforeEachAttempt,
			int retries) {
		return beforeEachAttempt.then(Mono.defer(() -> client.post()
			.uri(url)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(Map.of("model", MODEL, "max_tokens", call.maxTokens(), "messages",
					List.of(Map.of("role", "user", "content", call.prompt()))))
			.exchangeToMono((response) -> {
				if (response.statusCode().value() != 429) {
					return response.releaseBody();
				}
				Duration wait = retryAfter(response, retries);
				return response.releaseBody()
					.then(Mono.delay(wait))
					.then(untilAnswered(client, url, call, beforeEachAttempt, retries + 1));
			})));
	}

	private static Duration retryAfter(ClientResponse response, int retries) {
		Duration wait = Waits.fromHeaders(response.headers().asHttpHeaders()::getFirst, Instant.now());
		if (wait != null) {
			return wait;
		}
		double seconds = Math.min(0.5 * Math.pow(2, retries), 8.0);
		double jitter = 1 - 0.25 * ThreadLocalRandom.current().nextDouble();
		return Duration.ofNanos((long) (seconds * jitter * 1e9));
	}

	private static Client llmQuota(String baseUrl, String url) {
		String prefix = "llm.quota.providers.sim.";
		ConfigurableApplicationContext context = new SpringApplicationBuilder(Governed.class)
			.web(WebApplicationType.NONE)
			.properties("spring.main.banner-mode=off", "logging.level.dev.llmquota=ERROR",
					"llm.quota.headroom=" + HEADROOM, "llm.quota.max-wait=10m", prefix + "base-url=" + baseUrl,
					prefix + "dialect=openai", prefix + "burst-window=10s", prefix + "in-flight-gate=false",
					prefix + "models." + MODEL + ".requests-per-minute=" + REQUESTS_PER_MINUTE,
					prefix + "models." + MODEL + ".input-tokens-per-minute=" + INPUT_TOKENS_PER_MINUTE,
					prefix + "models." + MODEL + ".output-tokens-per-minute=" + OUTPUT_TOKENS_PER_MINUTE,
					prefix + "models." + MODEL + ".expected-latency=1s")
			.run();
		WebClient client = context.getBean(WebClient.Builder.class).build();
		return new Client() {

			@Override
			public String name() {
				return "(a) llm-quota";
			}

			@Override
			public Mono<Void> send(Call call) {
				return post(client, url, call).flatMap(ClientResponse::releaseBody);
			}

			@Override
			public void close() {
				context.close();
			}

		};
	}

	private static Client naive(String url) {
		WebClient client = WebClient.create();
		return new Client() {

			@Override
			public String name() {
				return "(b) retry 429s";
			}

			@Override
			public Mono<Void> send(Call call) {
				return untilAnswered(client, url, call, Mono.empty());
			}

		};
	}

	private static Client requestsLimiter(String url) {
		WebClient client = WebClient.create();
		// the requests-per-minute limit at the same headroom, a second at a time
		RateLimiter limiter = RateLimiter.of("rpm",
				RateLimiterConfig.custom()
					.limitForPeriod((int) Math.max(1, REQUESTS_PER_MINUTE * HEADROOM / 60))
					.limitRefreshPeriod(Duration.ofSeconds(1))
					.timeoutDuration(Duration.ofMinutes(10))
					.build());
		return new Client() {

			@Override
			public String name() {
				return "(c) requests limiter + retry";
			}

			@Override
			public Mono<Void> send(Call call) {
				return untilAnswered(client, url, call,
						Mono.<Void>empty().transformDeferred(RateLimiterOperator.of(limiter)));
			}

		};
	}

	private static Client tokensLimiter(String url) {
		WebClient client = WebClient.create();
		long perMinute = (long) (INPUT_TOKENS_PER_MINUTE * HEADROOM);
		// input tokens only: max_tokens is not reserved
		Bucket bucket = Bucket.builder()
			.addLimit(
					Bandwidth.builder().capacity(perMinute / 6).refillGreedy(perMinute, Duration.ofMinutes(1)).build())
			.build();
		ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
		return new Client() {

			@Override
			public String name() {
				return "(d) input-tokens limiter + retry";
			}

			@Override
			public Mono<Void> send(Call call) {
				return untilAnswered(client, url, call,
						Mono.defer(() -> Mono.fromFuture(bucket.asScheduler().consume(call.inputTokens(), scheduler))));
			}

			@Override
			public void close() {
				scheduler.shutdownNow();
			}

		};
	}

	/**
	 * The practical upper bound: knows the simulator's own buckets and sends each call
	 * the moment they hold it, so it is never refused. It serves both classes,
	 * interleaved: the classes take turns, and within a class calls go in arrival order.
	 * The call whose turn it is (the oldest of its class) goes as soon as it fits; any
	 * other waiting call goes ahead of it only when it fits now and leaves that call's
	 * earliest start where it was. What it optimises: input tokens answered a minute,
	 * with no refusal and neither class starved. (Strict arrival order across classes
	 * would starve the interactive calls for minutes here: each queues behind 24 batch
	 * calls of 6,000 tokens.) One decision at a time, each waiting for the simulator to
	 * take its call in.
	 */
	private static Client oracle(ProviderSimulator simulator, String url) {
		WebClient client = WebClient.create();
		List<Waiting> waiting = new ArrayList<>();
		Priority[] turn = { Priority.INTERACTIVE };
		Thread decider = new Thread(() -> {
			while (!Thread.currentThread().isInterrupted()) {
				Waiting next = null;
				synchronized (waiting) {
					Waiting head = waiting.stream()
						.filter((candidate) -> candidate.call().priority() == turn[0])
						.findFirst()
						.orElse(waiting.isEmpty() ? null : waiting.get(0));
					if (head != null) {
						Map<Dimension, DimensionState> states = simulator.states(MODEL);
						if (fits(states, head.call())) {
							next = head;
						}
						else {
							for (Waiting candidate : waiting) {
								if (candidate != head && fits(states, candidate.call())
										&& !delays(states, head.call(), candidate.call())) {
									next = candidate;
									break;
								}
							}
						}
					}
					if (next != null) {
						waiting.remove(next);
						if (next == head) {
							turn[0] = (head.call().priority() == Priority.INTERACTIVE) ? Priority.BATCH
									: Priority.INTERACTIVE;
						}
					}
				}
				if (next == null) {
					LockSupport.parkNanos(1_000_000);
					continue;
				}
				int before = simulator.requestLog().size();
				next.go().run();
				// the next decision waits until the simulator has taken this call in
				long giveUp = System.nanoTime() + 2_000_000_000L;
				while (simulator.requestLog().size() <= before && System.nanoTime() < giveUp) {
					Thread.onSpinWait();
				}
			}
		}, "oracle");
		decider.setDaemon(true);
		decider.start();
		return new Client() {

			@Override
			public String name() {
				return "(e) oracle";
			}

			@Override
			public Mono<Void> send(Call call) {
				return Mono.<Void>create((sink) -> {
					synchronized (waiting) {
						waiting.add(new Waiting(call, sink::success));
					}
				}).then(untilAnswered(client, url, call, Mono.empty()));
			}

			@Override
			public void close() {
				decider.interrupt();
			}

		};
	}

	/** A call the oracle holds, and what lets it go. */
	private record Waiting(Call call, Runnable go) {

	}

	/** How much of each dimension a call takes. */
	private static long units(Call call, Dimension dimension) {
		return switch (dimension) {
			case REQUESTS_PER_MINUTE -> 1;
			case INPUT_TOKENS_PER_MINUTE -> call.inputTokens();
			case OUTPUT_TOKENS_PER_MINUTE -> call.maxTokens();
			default -> 0;
		};
	}

	private static final List<Dimension> METERED = List.of(Dimension.REQUESTS_PER_MINUTE,
			Dimension.INPUT_TOKENS_PER_MINUTE, Dimension.OUTPUT_TOKENS_PER_MINUTE);

	/**
	 * Whether the simulator's buckets hold the call now. They report what is left scaled
	 * to a minute: a bucket of a 10-second window reports six times its level, so a
	 * call's units are scaled the same way.
	 */
	private static boolean fits(Map<Dimension, DimensionState> states, Call call) {
		long scale = Duration.ofMinutes(1).dividedBy(WINDOW);
		for (Dimension dimension : METERED) {
			if (remaining(states, dimension) < units(call, dimension) * scale) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Whether sending {@code later} now would push back the earliest time the buckets
	 * hold {@code head}, each refilling at its limit a minute.
	 */
	private static boolean delays(Map<Dimension, DimensionState> states, Call head, Call later) {
		return headWaitSeconds(states, head, later) > headWaitSeconds(states, head, null);
	}

	private static double headWaitSeconds(Map<Dimension, DimensionState> states, Call head, Call taken) {
		double scale = Duration.ofMinutes(1).dividedBy(WINDOW);
		double wait = 0;
		for (Dimension dimension : METERED) {
			DimensionState state = states.get(dimension);
			if (state == null) {
				continue;
			}
			double level = state.remaining() / scale - ((taken != null) ? units(taken, dimension) : 0);
			double missing = units(head, dimension) - level;
			if (missing > 0) {
				wait = Math.max(wait, missing * 60 / state.limit());
			}
		}
		return wait;
	}

	private static long remaining(Map<Dimension, DimensionState> states, Dimension dimension) {
		DimensionState state = states.get(dimension);
		return (state != null) ? state.remaining() : Long.MAX_VALUE;
	}

	// --- the report
	// ----------------------------------------------------------------------

	private static String header() {
		return String.format(Locale.ROOT, "%-34s %9s %11s %11s %8s %11s %9s %9s %9s %9s %9s %9s", "client", "calls/min",
				"input/min", "taken/min", "goodput", "refusals/1k", "int/min", "int p50", "int p99", "batch/min",
				"batch p50", "batch p99");
	}

	/** One client's figures in one round; goodput as a ratio to the oracle's. */
	private static double[] figures(Run run, Run oracle) {
		double minutes = run.minutes();
		return new double[] { run.callsPerMinute(), run.inputPerMinute(), run.takenPerMinute(),
				run.takenPerMinute() / oracle.takenPerMinute(), run.refusalsPerThousand(),
				run.calls(Priority.INTERACTIVE) / minutes, run.latency(Priority.INTERACTIVE, 0.5),
				run.latency(Priority.INTERACTIVE, 0.99), run.calls(Priority.BATCH) / minutes,
				run.latency(Priority.BATCH, 0.5), run.latency(Priority.BATCH, 0.99) };
	}

	private static String line(String client, double[] figures) {
		return String.format(Locale.ROOT,
				"%-34s %9.1f %,11.0f %,11.0f %8.2f %11.1f %9.1f %9.0f %9.0f %9.1f %9.0f %9.0f", client, figures[0],
				figures[1], figures[2], figures[3], figures[4], figures[5], figures[6], figures[7], figures[8],
				figures[9], figures[10]);
	}

	private static void write(List<List<Run>> rounds, Duration perClient, Path results) throws IOException {
		int clients = rounds.get(0).size();
		List<double[]> medians = new ArrayList<>();
		for (int c = 0; c < clients; c++) {
			List<double[]> perRound = new ArrayList<>();
			for (List<Run> runs : rounds) {
				perRound.add(figures(runs.get(c), runs.get(clients - 1)));
			}
			medians.add(Benchmarks.medians(perRound));
		}
		StringBuilder table = new StringBuilder();
		table.append(String.format(Locale.ROOT,
				"Goodput, median of %d rounds, %d s per client, measured after the first %d s (%d s measured); llm-quota's burst-window is the provider's 10 s and its in-flight bounds are off (the simulator, like OpenAI, meters no in-flight work); simulator: %d requests, %,d input and %,d output tokens per minute over a 10 s"
						+ " window, max_tokens reserved at admission, a refused call's request charged (as OpenAI documents); %d interactive workers (1,200 in, max_tokens 600)"
						+ " and %d batch workers (6,000 in, max_tokens 4096), closed loop; headroom %.2f; input/min: input tokens of the calls answered in the measured stretch; taken/min: of the calls the provider took in during it (at most the account's rate plus the input bucket's level at the stretch's start); goodput: taken/min over the oracle's; latencies in ms, -1 where no call of the class completed%n%n",
				rounds.size(), perClient.toSeconds(), WARM_UP.toSeconds(), perClient.minus(WARM_UP).toSeconds(),
				REQUESTS_PER_MINUTE, INPUT_TOKENS_PER_MINUTE, OUTPUT_TOKENS_PER_MINUTE, INTERACTIVE_WORKERS,
				BATCH_WORKERS, HEADROOM));
		table.append(header()).append('\n');
		for (int c = 0; c < clients; c++) {
			table.append(line(rounds.get(0).get(c).client(), medians.get(c))).append('\n');
		}
		double[] llmQuota = medians.get(0);
		double bestOther = medians.subList(1, clients - 1)
			.stream()
			.mapToDouble((figures) -> figures[3])
			.max()
			.orElse(Double.NaN);
		double[] oracle = medians.get(clients - 1);
		double overBest = llmQuota[3] / bestOther;
		table.append(String.format(Locale.ROOT,
				"%nllm-quota: %.2f of the oracle's goodput (target: at least 0.95 x headroom = %.2f: %s), %.1f refusals per"
						+ " 1,000 calls (target: below 1: %s), %.2f x the best of (b)-(d) (target: at least 1.2: %s);"
						+ " taken in, as a share of the account's %,d input tokens a minute: llm-quota %.2f, the oracle %.2f%n",
				llmQuota[3], 0.95 * HEADROOM, (llmQuota[3] >= 0.95 * HEADROOM) ? "met" : "not met", llmQuota[4],
				(llmQuota[4] < 1) ? "met" : "not met", overBest, (overBest >= 1.2) ? "met" : "not met",
				INPUT_TOKENS_PER_MINUTE, llmQuota[2] / INPUT_TOKENS_PER_MINUTE, oracle[2] / INPUT_TOKENS_PER_MINUTE));
		Files.createDirectories(results);
		Files.writeString(results.resolve("goodput.txt"), table.toString());
		System.out.println();
		System.out.print(table);
		chart(rounds.get(rounds.size() - 1), results.resolve("goodput.png"));
	}

	/**
	 * Goodput over time per client: input tokens of answered calls per minute, 5 s at a
	 * time.
	 */
	private static void chart(List<Run> runs, Path png) throws IOException {
		XYSeriesCollection series = new XYSeriesCollection();
		for (Run run : runs) {
			XYSeries line = new XYSeries(run.client());
			long step = 5_000_000_000L;
			for (long from = run.startNanos(); from < run.endNanos(); from += step) {
				long lower = from;
				long upper = from + step;
				long tokens = run.done()
					.stream()
					.filter((done) -> done.finishedNanos() >= lower && done.finishedNanos() < upper)
					.mapToLong(Done::inputTokens)
					.sum();
				line.add((upper - run.startNanos()) / 1e9, tokens * 60e9 / step);
			}
			series.addSeries(line);
		}
		JFreeChart chart = ChartFactory.createXYLineChart("Goodput over time (last round)", "seconds",
				"input tokens answered per minute", series, PlotOrientation.VERTICAL, true, false, false);
		ChartUtils.saveChartAsPNG(png.toFile(), chart, 900, 500);
	}

	/** The governed client's application: auto-configuration and properties only. */
	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class Governed {

		/**
		 * Event loops of its own: Reactor Netty's global ones, which the simulator also
		 * uses, would be disposed when this application closes.
		 */
		@Bean
		ReactorResourceFactory reactorResourceFactory() {
			ReactorResourceFactory factory = new ReactorResourceFactory();
			factory.setUseGlobalResources(false);
			factory.setShutdownQuietPeriod(Duration.ZERO);
			// as many connections as the other clients have (Reactor Netty's global 500):
			// admitted calls must not queue for a socket
			factory.setConnectionProviderSupplier(() -> ConnectionProvider.create("governed", 500));
			return factory;
		}

	}

}
