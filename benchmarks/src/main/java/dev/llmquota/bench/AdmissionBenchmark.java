package dev.llmquota.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;

import dev.llmquota.core.Accounting;
import dev.llmquota.core.Demand;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.Limits;
import dev.llmquota.core.Pool;
import dev.llmquota.core.PoolSpec;
import dev.llmquota.core.Priority;
import dev.llmquota.core.ProviderSpec;
import dev.llmquota.core.QuotaClock;
import dev.llmquota.core.QuotaConfig;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.core.QuotaPermit;
import dev.llmquota.core.QuotaSettings;
import dev.llmquota.store.LocalQuotaStore;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Part 2: the cost of admission. JMH: reserve and release on a pool of 1, 4 and 7
 * dimensions against Bucket4j's {@code tryConsume} on as many buckets, on 1 and 2
 * threads. Then 100,000 calls queued on one pool: heap per waiter, threads, and the time
 * to drain them. (What the filter adds to a call is measured by
 * {@link FilterOverheadBenchmark}.)
 */
public class AdmissionBenchmark {

	private static final int FORKS = 3;

	/** A pool of that many stored dimensions, with limits no call reaches. */
	@State(Scope.Benchmark)
	public static class Engine {

		@Param({ "1", "4", "7" })
		public int dimensions;

		QuotaEngine engine;

		Pool pool;

		final Demand demand = new Demand(100, 100);

		@Setup(Level.Trial)
		public void start() {
			this.engine = engine(this.dimensions, 1_000_000_000_000L);
			this.pool = this.engine.pool("bench", "model");
		}

		@TearDown(Level.Trial)
		public void stop() {
			this.engine.close();
		}

	}

	/** As many Bucket4j buckets, with limits no call reaches. */
	@State(Scope.Benchmark)
	public static class Buckets {

		@Param({ "1", "4", "7" })
		public int dimensions;

		Bucket[] buckets;

		@Setup(Level.Trial)
		public void start() {
			this.buckets = new Bucket[this.dimensions];
			for (int i = 0; i < this.dimensions; i++) {
				this.buckets[i] = Bucket.builder()
					.addLimit(Bandwidth.builder()
						.capacity(1_000_000_000_000L)
						.refillGreedy(1_000_000_000_000L, Duration.ofHours(1))
						.build())
					.build();
			}
		}

	}

	@Benchmark
	@BenchmarkMode(Mode.AverageTime)
	@OutputTimeUnit(TimeUnit.NANOSECONDS)
	public boolean llmQuotaReserveAndRelease(Engine state) {
		QuotaPermit permit = state.engine.acquire(state.pool, state.demand, null, null).block();
		permit.release();
		return permit.isReleased();
	}

	/** The fast path a call nothing stands before takes: no Mono, no queue. */
	@Benchmark
	@BenchmarkMode(Mode.AverageTime)
	@OutputTimeUnit(TimeUnit.NANOSECONDS)
	public boolean llmQuotaTryAcquireAndRelease(Engine state) {
		QuotaPermit permit = state.engine.tryAcquire(state.pool, state.demand, null);
		permit.release();
		return permit.isReleased();
	}

	@Benchmark
	@BenchmarkMode(Mode.AverageTime)
	@OutputTimeUnit(TimeUnit.NANOSECONDS)
	public boolean bucket4jTryConsume(Buckets state) {
		boolean all = true;
		for (Bucket bucket : state.buckets) {
			all &= bucket.tryConsume(100);
		}
		return all;
	}

	/**
	 * Options of a short JMH run: each benchmark in JVMs of its own, so one's JIT profile
	 * does not shape the next one's code (see {@link #classPathForForks()}), three times,
	 * for a median.
	 */
	static OptionsBuilder options(String include) {
		OptionsBuilder options = new OptionsBuilder();
		options.include(include)
			.forks(FORKS)
			.warmupIterations(3)
			.warmupTime(TimeValue.seconds(1))
			.measurementIterations(5)
			.measurementTime(TimeValue.seconds(1));
		return options;
	}

	/**
	 * Gives JMH's forks a class path that holds the benchmarks. A fork is started with
	 * this JVM's class path, which for a Spring Boot jar is the jar alone: its libraries
	 * are nested in it, read by Boot's own class loader. The jar is extracted once, with
	 * Boot's jar tools, into a folder whose jar names its libraries in its manifest, and
	 * the forks are given that jar. Run from a plain class path, nothing is done.
	 * @throws IOException if the jar cannot be extracted
	 * @throws InterruptedException if interrupted while it is
	 */
	static void classPathForForks() throws IOException, InterruptedException {
		if (AdmissionBenchmark.class.getClassLoader() == ClassLoader.getSystemClassLoader()) {
			return;
		}
		Path jar = Path.of(System.getProperty("java.class.path"));
		Path folder = Files.createTempDirectory("llm-quota-benchmarks");
		Runtime.getRuntime().addShutdownHook(new Thread(() -> delete(folder)));
		String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
		Process extract = new ProcessBuilder(java, "-Djarmode=tools", "-jar", jar.toString(), "extract",
				"--destination", folder.toString())
			.inheritIO()
			.start();
		if (extract.waitFor() != 0) {
			throw new IOException("Could not extract " + jar + " for JMH's forks (exit " + extract.exitValue() + ")");
		}
		System.setProperty("java.class.path", folder.resolve(jar.getFileName()).toString());
	}

	private static void delete(Path folder) {
		try (Stream<Path> paths = Files.walk(folder)) {
			paths.sorted(Comparator.reverseOrder()).forEach((path) -> path.toFile().delete());
		}
		catch (IOException ex) {
			// a temporary folder left behind
		}
	}

	/** An engine of one provider entry, one model, and that many stored dimensions. */
	static QuotaEngine engine(int dimensions, long limit) {
		Map<Dimension, Long> pool = new LinkedHashMap<>();
		Map<Dimension, Long> account = new LinkedHashMap<>();
		List<Dimension> rates = List.of(Dimension.REQUESTS_PER_MINUTE, Dimension.TOKENS_PER_MINUTE,
				Dimension.INPUT_TOKENS_PER_MINUTE, Dimension.OUTPUT_TOKENS_PER_MINUTE);
		for (int i = 0; i < Math.min(4, dimensions); i++) {
			pool.put(rates.get(i), limit);
		}
		List<Dimension> shared = List.of(Dimension.REQUESTS_PER_MINUTE, Dimension.TOKENS_PER_MINUTE,
				Dimension.TOKENS_PER_DAY);
		for (int i = 0; i < dimensions - 4; i++) {
			account.put(shared.get(i), limit);
		}
		Accounting accounting = new Accounting(true, true, true, 1);
		PoolSpec model = new PoolSpec("model", Set.of(), Limits.of(pool), accounting, Duration.ofSeconds(2),
				Duration.ofSeconds(1), 4096, Priority.INTERACTIVE, "chars:4");
		PoolSpec unlisted = new PoolSpec("unlisted", Set.of(), Limits.none(), accounting, Duration.ofSeconds(2),
				Duration.ofSeconds(1), 4096, Priority.INTERACTIVE, "chars:4");
		ProviderSpec provider = new ProviderSpec("bench", URI.create("http://127.0.0.1:1"), "openai", "local",
				ZoneId.of("UTC"), Limits.of(account), Duration.ofSeconds(2), false, Map.of("model", model),
				Optional.empty(), unlisted, Optional.empty(), false, true);
		QuotaSettings settings = new QuotaSettings(0.8, Duration.ofMinutes(10), Duration.ofMinutes(10), 10,
				Duration.ofMinutes(5));
		return new QuotaEngine(new QuotaConfig(settings, Map.of("bench", provider)), new LocalQuotaStore(),
				QuotaClock.system());
	}

	/**
	 * Runs part 2 and writes {@code admission.txt}.
	 * @param results where the table goes
	 * @throws Exception if a run fails
	 */
	static void run(Path results) throws Exception {
		StringBuilder table = new StringBuilder();
		table.append("Admission cost: reserve + release on one pool (llm-quota: acquire, the Mono and the queue;\n")
			.append("tryAcquire, the fast path of a call nothing stands before) against tryConsume on as many\n")
			.append("buckets (Bucket4j), ns per operation: the median of 3 JVMs (JMH forks), each the mean of\n")
			.append("5 one-second iterations after 3 of warm-up\n\n");
		table.append(String.format(Locale.ROOT, "%-8s %-11s %14s %14s %14s %10s%n", "threads", "dimensions", "acquire",
				"tryAcquire", "Bucket4j", "ratio"));
		classPathForForks();
		for (int threads : new int[] { 1, 2 }) {
			Map<String, Double> scores = new LinkedHashMap<>();
			Options options = options(AdmissionBenchmark.class.getName() + "\\.").threads(threads).build();
			Collection<RunResult> runs = new Runner(options).run();
			for (RunResult run : runs) {
				String method = run.getParams().getBenchmark().replaceAll(".*\\.", "");
				scores.put(method + "/" + run.getParams().getParam("dimensions"), median(run));
			}
			for (String dimensions : List.of("1", "4", "7")) {
				double queued = scores.get("llmQuotaReserveAndRelease/" + dimensions);
				double fast = scores.get("llmQuotaTryAcquireAndRelease/" + dimensions);
				double theirs = scores.get("bucket4jTryConsume/" + dimensions);
				table.append(String.format(Locale.ROOT, "%-8d %-11s %14.0f %14.0f %14.0f %10.2f%n", threads, dimensions,
						queued, fast, theirs, fast / theirs));
			}
		}
		table.append('\n').append(waiters());
		Files.createDirectories(results);
		Files.writeString(results.resolve("admission.txt"), table.toString());
		System.out.println();
		System.out.print(table);
	}

	/** The median of a benchmark's forks, each the mean of its measured iterations. */
	private static double median(RunResult run) {
		return Benchmarks.median(
				run.getBenchmarkResults().stream().mapToDouble((fork) -> fork.getPrimaryResult().getScore()).toArray());
	}

	/**
	 * 100,000 calls waiting on one pool: heap per waiter, threads, time to drain; the
	 * median of three runs.
	 */
	static String waiters() throws InterruptedException {
		List<Waiting> runs = new ArrayList<>();
		for (int run = 0; run < 3; run++) {
			runs.add(waiting());
		}
		double bytesEach = Benchmarks.median(runs.stream().mapToDouble(Waiting::bytesEach).toArray());
		double drained = Benchmarks.median(runs.stream().mapToDouble(Waiting::drainedNanos).toArray());
		Waiting last = runs.get(2);
		return String.format(Locale.ROOT,
				"Waiters: %,d calls queued on one pool (%,d waiting): %,.0f bytes of heap each; threads %d before, %d"
						+ " while they wait; all %,d admitted %.0f ms after the limit was raised (%,.0f a second);"
						+ " bytes and time the median of 3 runs%n",
				Waiting.CALLS, last.waiting, bytesEach, last.threadsBefore, last.threadsWaiting, Waiting.CALLS,
				drained / 1e6, Waiting.CALLS / (drained / 1e9));
	}

	private record Waiting(int waiting, long bytesEach, int threadsBefore, int threadsWaiting, long drainedNanos) {

		static final int CALLS = 100_000;

	}

	private static Waiting waiting() throws InterruptedException {
		int calls = Waiting.CALLS;
		QuotaEngine engine = engine(1, 1);
		Pool pool = engine.pool("bench", "model");
		// the bucket of one request a minute is spent by the first call: the rest wait
		engine.acquire(pool, new Demand(1, 1), null, null).block().release();
		long heapBefore = usedHeap();
		int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
		CountDownLatch admitted = new CountDownLatch(calls);
		for (int i = 0; i < calls; i++) {
			engine.acquire(pool, new Demand(1, 1), null, null).subscribe((permit) -> {
				admitted.countDown();
				permit.release();
			});
		}
		long heapWaiting = usedHeap();
		int threadsWaiting = ManagementFactory.getThreadMXBean().getThreadCount();
		int waiting = engine.waiting(pool.account());
		long start = System.nanoTime();
		engine.changeLimit("bench", "model", Dimension.REQUESTS_PER_MINUTE, 1_000_000_000_000L);
		if (!admitted.await(5, TimeUnit.MINUTES)) {
			throw new IllegalStateException(admitted.getCount() + " waiters were not admitted");
		}
		long drained = System.nanoTime() - start;
		engine.close();
		return new Waiting(waiting, (heapWaiting - heapBefore) / calls, threadsBefore, threadsWaiting, drained);
	}

	private static long usedHeap() {
		for (int i = 0; i < 3; i++) {
			System.gc();
		}
		return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
	}

}
