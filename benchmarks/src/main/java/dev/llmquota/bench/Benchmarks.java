package dev.llmquota.bench;

import java.nio.file.Path;
import java.time.Duration;

/**
 * Runs one part of the benchmarks: {@code goodput} (part 1), {@code admission} (part 2),
 * {@code filter} and {@code profile} (what the filter adds to a call, and where its CPU
 * goes), {@code redis} (part 3) or {@code routes} (a route over three deployments against
 * LiteLLM's defaults). Results go to {@code benchmarks/results/}.
 */
public final class Benchmarks {

	private Benchmarks() {
	}

	public static void main(String[] args) throws Exception {
		String part = (args.length > 0) ? args[0] : "goodput";
		Path results = Path.of((args.length > 1) ? args[1] : "benchmarks/results");
		switch (part) {
			case "goodput" -> GoodputBenchmark.run(Duration.ofSeconds(Long.getLong("seconds", 60)),
					Integer.getInteger("rounds", 3), results);
			case "admission" -> AdmissionBenchmark.run(results);
			case "filter" -> FilterOverheadBenchmark.run(results);
			case "redis" -> RedisBenchmark.run(results);
			case "routes" -> RouteBenchmark.run(Duration.ofSeconds(Long.getLong("seconds", 60)),
					Integer.getInteger("rounds", 3), results);
			case "profile" -> GovernedPathProfile.run(results);
			default -> throw new IllegalArgumentException(
					"Unknown part '" + part + "': goodput, admission, filter, profile, redis or routes");
		}
		System.exit(0);
	}

}
