package dev.llmquota.bench;

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
 * same builder with llm-quota governing it (limits no call reaches). Each client is
 * warmed with 20,000 calls, then measured in three rounds, the clients taking turns in
 * each (so a slower spell of the machine falls on all of them), with one caller and with
 * eight: latency (mean, p50, p99), throughput, CPU time per call over all threads and
 * bytes allocated per call over all threads; each figure is the median of the rounds.
 */
public class FilterOverheadBenchmark {

	private static final String ANSWER = "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"model\":\"model\","
			+ "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"ok\"},\"finish_reason\":\"stop\"}],"
			+ "\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":1,\"total_tokens\":13}}";

	private static final Map<String, Object> BODY = Map.of("model", "model", "max_tokens", 16, "messages",
			List.of(Map.of("role", "user", "content", "Say ok.")));

	private static final int WARM_UP = Integer.getInteger("filter.warmup", 20_000);

	private static final int CALLS = Integer.getInteger("filter.calls", 20_000);

	private static final int CALLERS = 8;

	private static final int ROUNDS = Integer.getInteger("filter.rounds", 3);

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
			StringBuilder table = new StringBuilder(String.format(Locale.ROOT,
					"Filter overhead: loopback round trips, %,d warm-up calls per client, then %d rounds; in each round"
							+ " every client in turn makes %,d calls with 1 caller and %,d with %d callers; every figure is"
							+ " the median of the rounds%n%n",
					WARM_UP, ROUNDS, CALLS, CALLS * 2, CALLERS));
			table.append(String.format(Locale.ROOT, "%-32s %7s %9s %8s %8s %9s %11s %12s%n", "client", "callers",
					"mean us", "p50 us", "p99 us", "calls/s", "CPU us/call", "bytes/call"));
			List<WebClient> webClients = new ArrayList<>();
			for (Client client : clients) {
				WebClient webClient = client.factory.get();
				measure(webClient, url, 1, WARM_UP);
				webClients.add(webClient);
			}
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
			List<Figures> medians = new ArrayList<>();
			for (int row = 0; row < clients.size() * 2; row++) {
				int at = row;
				medians.add(Figures.median(rounds.stream().map((figures) -> figures.get(at)).toList()));
			}
			medians.forEach((row) -> table.append(row.line()));
			Figures baseline1 = medians.get(2);
			Figures governed1 = medians.get(4);
			Figures baseline8 = medians.get(3);
			Figures governed8 = medians.get(5);
			table.append(String.format(Locale.ROOT,
					"%nAgainst the same Spring stack without llm-quota: %+.0f us a call (p50 %+.0f us) with one caller;"
							+ " with %d callers %+.0f us of CPU a call (%+.0f%%), %.2f of its throughput, %,.0f bytes"
							+ " allocated a call against %,.0f%n",
					governed1.mean - baseline1.mean, governed1.p50 - baseline1.p50, CALLERS,
					governed8.cpuPerCall - baseline8.cpuPerCall,
					100 * (governed8.cpuPerCall - baseline8.cpuPerCall) / baseline8.cpuPerCall,
					governed8.throughput / baseline8.throughput, governed8.bytesPerCall, baseline8.bytesPerCall));
			// the spread the medians hide: each round's own difference
			StringBuilder spread = new StringBuilder();
			for (List<Figures> figures : rounds) {
				spread.append(String.format(Locale.ROOT, "%s%+.0f us / %.2f", spread.isEmpty() ? "" : ", ",
						figures.get(5).cpuPerCall - figures.get(3).cpuPerCall,
						figures.get(5).throughput / figures.get(3).throughput));
			}
			table.append(String.format(Locale.ROOT,
					"Each round's added CPU a call and share of the baseline's throughput, %d callers: %s%n", CALLERS,
					spread));
			return table.toString();
		}
		finally {
			with.close();
			without.close();
			server.disposeNow(Duration.ofSeconds(5));
		}
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
		// every other thread (event loops, timers, the engine's) plus what the callers
		// spent
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
