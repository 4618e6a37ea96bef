package dev.llmquota.bench;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongUnaryOperator;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * What llm-quota's filter adds to a call: loopback round trips to a server that answers a
 * fixed Chat Completions body at once, through three clients in one run:
 * {@code WebClient.create()}, Spring Boot's {@code WebClient.Builder} without llm-quota
 * ({@code llm.quota.enabled=false}: the fair baseline, the same Spring stack), and the
 * same builder with llm-quota governing it (limits no call reaches). The clients are
 * warmed until the JIT is quiet, then measured in nine short rounds, the clients taking
 * turns in each (so a slower spell of the machine falls on all of them), with one caller
 * and with eight: latency (mean, p50, p99), throughput, CPU time per call over all
 * threads and bytes allocated per call over all threads; each figure is the median of the
 * rounds. What llm-quota adds is the median of the rounds' own differences (governed
 * against the baseline of the same round), with every round's difference listed: on a
 * shared machine a round's figures move by more than what is measured, and many short
 * paired rounds show that where three long ones hid it.
 */
public class FilterOverheadBenchmark {

	static final String ANSWER = "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"model\":\"model\","
			+ "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"ok\"},\"finish_reason\":\"stop\"}],"
			+ "\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":1,\"total_tokens\":13}}";

	static final Map<String, Object> BODY = Map.of("model", "model", "max_tokens", 16, "messages",
			List.of(Map.of("role", "user", "content", "Say ok.")));

	private static final int WARM_UP = Integer.getInteger("filter.warmup", 30_000);

	private static final int WARM_UP_TURN = 5_000;

	private static final int QUIET_JIT_PERCENT = 2;

	private static final CompilationMXBean jit = ManagementFactory.getCompilationMXBean();

	private static final int CALLS = Integer.getInteger("filter.calls", 8_000);

	private static final int CALLERS = 8;

	private static final int ROUNDS = Integer.getInteger("filter.rounds", 9);

	private static final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory
		.getThreadMXBean();

	/**
	 * Runs the comparison and writes {@code filter.txt}.
	 * @param results where the table goes
	 * @throws Exception if the run fails
	 */
	static void run(Path results) throws Exception {
		String table = table();
		Files.createDirectories(results);
		Files.writeString(results.resolve("filter.txt"), table);
		System.out.println();
		System.out.print(table);
	}

	/** A loopback server that answers a fixed Chat Completions body at once. */
	static DisposableServer server() {
		return HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.route((routes) -> routes.post("/v1/chat/completions", (request, response) -> request.receive()
				.then()
				.then(response.header("content-type", "application/json").sendString(Mono.just(ANSWER)).then())))
			.bindNow();
	}

	private static String table() throws Exception {
		DisposableServer server = server();
		String base = "http://127.0.0.1:" + server.port();
		String url = base + "/v1/chat/completions";
		ConfigurableApplicationContext without = context(base, false);
		ConfigurableApplicationContext with = context(base, true);
		try {
			List<Client> clients = List.of(new Client("WebClient.create()", WebClient::create),
					new Client("Boot's builder, llm-quota off", () -> without.getBean(WebClient.Builder.class).build()),
					new Client("Boot's builder, llm-quota on", () -> with.getBean(WebClient.Builder.class).build()));
			List<WebClient> webClients = new ArrayList<>();
			for (Client client : clients) {
				webClients.add(client.factory.get());
			}
			Warm warm = warm(webClients, url);
			long jitBefore = jit.getTotalCompilationTime();
			long roundsStart = System.nanoTime();
			// rounds[round][client * 2 + (0: one caller, 1: eight)]
			List<List<Figures>> rounds = new ArrayList<>();
			for (int round = 0; round < ROUNDS; round++) {
				List<Figures> figures = new ArrayList<>();
				for (int i = 0; i < clients.size(); i++) {
					figures.add(measure(webClients.get(i), url, 1, CALLS).named(clients.get(i).name));
					figures.add(measure(webClients.get(i), url, CALLERS, CALLS * 2).named(clients.get(i).name));
				}
				rounds.add(figures);
			}
			long jitMillis = jit.getTotalCompilationTime() - jitBefore;
			long roundsMillis = (System.nanoTime() - roundsStart) / 1_000_000;
			StringBuilder table = new StringBuilder(String.format(Locale.ROOT,
					"Filter overhead: loopback round trips; the clients warmed in turns of %,d calls with 1 caller and"
							+ " %,d with %d callers each until one turn over the three kept the JIT compiling under %d%%"
							+ " of its time (%,d calls a client, %s); then %d rounds, in each round every client in turn"
							+ " makes %,d calls with 1 caller and %,d with %d callers; the JIT compiled for %,d ms of"
							+ " the rounds' %,d s; every figure is the median of the rounds%n%n",
					WARM_UP_TURN, WARM_UP_TURN * 2, CALLERS, QUIET_JIT_PERCENT, warm.calls(),
					warm.quiet() ? "quiet" : "not quiet by then", ROUNDS, CALLS, CALLS * 2, CALLERS, jitMillis,
					roundsMillis / 1000));
			table.append(String.format(Locale.ROOT, "%-32s %7s %9s %8s %8s %9s %11s %12s%n", "client", "callers",
					"mean us", "p50 us", "p99 us", "calls/s", "CPU us/call", "bytes/call"));
			List<Figures> medians = new ArrayList<>();
			for (int row = 0; row < clients.size() * 2; row++) {
				int at = row;
				medians.add(Figures.median(rounds.stream().map((figures) -> figures.get(at)).toList()));
			}
			medians.forEach((row) -> table.append(row.line()));
			// each round's own differences, governed against the baseline of
			// the same round
			double[] added1 = each(rounds, (round) -> round.get(4).mean - round.get(2).mean);
			double[] addedP50 = each(rounds, (round) -> round.get(4).p50 - round.get(2).p50);
			double[] addedCpu = each(rounds, (round) -> round.get(5).cpuPerCall - round.get(3).cpuPerCall);
			double[] share = each(rounds, (round) -> round.get(5).throughput / round.get(3).throughput);
			double[] addedP99 = each(rounds, (round) -> round.get(5).p99 - round.get(3).p99);
			double[] addedBytes = each(rounds, (round) -> round.get(5).bytesPerCall - round.get(3).bytesPerCall);
			Figures baseline8 = medians.get(3);
			table.append(String.format(Locale.ROOT,
					"%nAgainst the same Spring stack without llm-quota (the median of the %d rounds' own differences):"
							+ " %+.0f us a call (p50 %+.0f us) with one caller; with %d callers %+.0f us of CPU a call"
							+ " (%+.0f%% of the baseline's %.0f), %.2f of its throughput, p99 %+.0f us, %+,.0f bytes"
							+ " allocated a call (against %,.0f)%n",
					ROUNDS, Benchmarks.median(added1), Benchmarks.median(addedP50), CALLERS,
					Benchmarks.median(addedCpu), 100 * Benchmarks.median(addedCpu) / baseline8.cpuPerCall,
					baseline8.cpuPerCall, Benchmarks.median(share), Benchmarks.median(addedP99),
					Benchmarks.median(addedBytes), baseline8.bytesPerCall));
			// the spread the medians hide
			table.append(String.format(Locale.ROOT,
					"Every round, sorted, %d callers: added CPU a call (us) %s;"
							+ " share of the baseline's throughput %s%n",
					CALLERS, sorted(addedCpu, "%+.0f"), sorted(share, "%.2f")));
			return table.toString();
		}
		finally {
			with.close();
			without.close();
			server.disposeNow(Duration.ofSeconds(5));
		}
	}

	/**
	 * Warms the clients in turns until one turn over all of them keeps the JIT compiling
	 * under {@link #QUIET_JIT_PERCENT} of its wall time: a client whose code is still
	 * being compiled while it is measured pays for the compiler's CPU (a governed call
	 * runs more code, so it takes longer to settle than a fixed number of calls allowed).
	 * At least {@link #WARM_UP} calls a client, at most ten times that.
	 */
	static Warm warm(List<WebClient> clients, String url) throws InterruptedException {
		int calls = 0;
		while (true) {
			long jitBefore = jit.getTotalCompilationTime();
			long start = System.nanoTime();
			for (WebClient client : clients) {
				measure(client, url, 1, WARM_UP_TURN);
				measure(client, url, CALLERS, WARM_UP_TURN * 2);
			}
			calls += WARM_UP_TURN * 3;
			long jitMillis = jit.getTotalCompilationTime() - jitBefore;
			long wallMillis = (System.nanoTime() - start) / 1_000_000;
			boolean quiet = jitMillis * 100 < QUIET_JIT_PERCENT * wallMillis;
			if ((quiet && calls >= WARM_UP) || calls >= WARM_UP * 10) {
				return new Warm(calls, quiet);
			}
		}
	}

	record Warm(int calls, boolean quiet) {

	}

	private static double[] each(List<List<Figures>> rounds, ToDoubleFunction<List<Figures>> difference) {
		return rounds.stream().mapToDouble(difference).toArray();
	}

	private static String sorted(double[] values, String format) {
		double[] sorted = values.clone();
		Arrays.sort(sorted);
		StringBuilder text = new StringBuilder();
		for (double value : sorted) {
			text.append(text.isEmpty() ? "" : " ").append(String.format(Locale.ROOT, format, value));
		}
		return text.toString();
	}

	static ConfigurableApplicationContext context(String base, boolean governed) {
		String prefix = "llm.quota.providers.local.";
		return new SpringApplicationBuilder(GoodputBenchmark.Governed.class).web(WebApplicationType.NONE)
			.properties("spring.main.banner-mode=off", "logging.level.root=WARN", "llm.quota.enabled=" + governed,
					prefix + "base-url=" + base, prefix + "dialect=openai",
					prefix + "models.model.requests-per-minute=1000000000",
					prefix + "models.model.tokens-per-minute=1000000000000")
			.run();
	}

	/** Runs {@code calls} calls over {@code callers} threads and measures them. */
	static Figures measure(WebClient client, String url, int callers, int calls) throws InterruptedException {
		long[] latencies = new long[calls];
		int each = calls / callers;
		CountDownLatch start = new CountDownLatch(1);
		CountDownLatch done = new CountDownLatch(callers);
		LongAdder callerCpu = new LongAdder();
		LongAdder callerBytes = new LongAdder();
		List<Thread> started = new ArrayList<>();
		long cpuBefore = sum(threads::getThreadCpuTime);
		long bytesBefore = sum(threads::getThreadAllocatedBytes);
		for (int t = 0; t < callers; t++) {
			int from = t * each;
			Thread caller = new Thread(() -> {
				long ownCpu = threads.getCurrentThreadCpuTime();
				long ownBytes = threads.getCurrentThreadAllocatedBytes();
				try {
					start.await();
					for (int i = from; i < from + each; i++) {
						long began = System.nanoTime();
						call(client, url);
						latencies[i] = System.nanoTime() - began;
					}
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				finally {
					callerCpu.add(threads.getCurrentThreadCpuTime() - ownCpu);
					callerBytes.add(threads.getCurrentThreadAllocatedBytes() - ownBytes);
					done.countDown();
				}
			}, "filter-caller-" + t);
			started.add(caller);
			caller.start();
		}
		long began = System.nanoTime();
		start.countDown();
		done.await();
		long elapsed = System.nanoTime() - began;
		for (Thread caller : started) {
			caller.join();
		}
		// every other thread (event loops, timers, the engine's) plus what the
		// callers spent
		long cpu = sum(threads::getThreadCpuTime) - cpuBefore + callerCpu.sum();
		long bytes = sum(threads::getThreadAllocatedBytes) - bytesBefore + callerBytes.sum();
		long[] sorted = Arrays.copyOf(latencies, each * callers);
		Arrays.sort(sorted);
		double mean = Arrays.stream(sorted).average().orElse(Double.NaN) / 1e3;
		int p99 = (int) Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1);
		return new Figures(null, callers, mean, sorted[sorted.length / 2] / 1e3, sorted[p99] / 1e3,
				sorted.length / (elapsed / 1e9), cpu / 1e3 / sorted.length, (double) bytes / sorted.length);
	}

	/**
	 * Sums a per-thread counter over the live threads (callers not yet started, or
	 * ended).
	 */
	private static long sum(LongUnaryOperator perThread) {
		long total = 0;
		for (long id : threads.getAllThreadIds()) {
			long value = perThread.applyAsLong(id);
			if (value > 0) {
				total += value;
			}
		}
		return total;
	}

	private static void call(WebClient client, String url) {
		client.post()
			.uri(url)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(BODY)
			.retrieve()
			.bodyToMono(String.class)
			.block();
	}

	private record Client(String name, Supplier<WebClient> factory) {

	}

	record Figures(String name, int callers, double mean, double p50, double p99, double throughput, double cpuPerCall,
			double bytesPerCall) {

		/** Each figure the median of the rounds' (their middle one, for an odd count). */
		static Figures median(List<Figures> rounds) {
			return new Figures(rounds.get(0).name, rounds.get(0).callers, median(rounds, Figures::mean),
					median(rounds, Figures::p50), median(rounds, Figures::p99), median(rounds, Figures::throughput),
					median(rounds, Figures::cpuPerCall), median(rounds, Figures::bytesPerCall));
		}

		private static double median(List<Figures> rounds, ToDoubleFunction<Figures> figure) {
			return Benchmarks.median(rounds.stream().mapToDouble(figure).toArray());
		}

		Figures named(String name) {
			return new Figures(name, this.callers, this.mean, this.p50, this.p99, this.throughput, this.cpuPerCall,
					this.bytesPerCall);
		}

		String line() {
			return String.format(Locale.ROOT, "%-32s %7d %9.1f %8.1f %8.1f %,9.0f %11.1f %,12.0f%n", this.name,
					this.callers, this.mean, this.p50, this.p99, this.throughput, this.cpuPerCall, this.bytesPerCall);
		}

	}

}
