package dev.llmquota.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/**
 * Runs one part of the benchmarks: {@code goodput} (part 1), {@code admission} (part 2),
 * {@code filter}, {@code parts} and {@code profile} (what the filter adds to a call,
 * llm-quota's own part of it, and where its CPU goes), {@code redis} (part 3) or
 * {@code routes} (a route over three deployments against LiteLLM's defaults). Results go
 * to {@code benchmarks/results/}.
 */
public final class Benchmarks {

	private Benchmarks() {
	}

	public static void main(String[] args) throws Exception {
		String part = (args.length > 0) ? args[0] : "goodput";
		Path results = Path.of((args.length > 1) ? args[1] : "benchmarks/results");
		switch (part) {
			case "goodput" -> GoodputBenchmark.run(Duration.ofSeconds(Long.getLong("seconds", 135)),
					Integer.getInteger("rounds", 3), results);
			case "admission" -> AdmissionBenchmark.run(results);
			case "filter" -> FilterOverheadBenchmark.run(results);
			case "redis" -> RedisBenchmark.run(results);
			case "routes" -> RouteBenchmark.run(Duration.ofSeconds(Long.getLong("seconds", 60)),
					Integer.getInteger("rounds", 3), results);
			case "profile" -> GovernedPathProfile.run(results);
			case "parts" -> CallPartsBenchmark.run(results);
			default -> throw new IllegalArgumentException(
					"Unknown part '" + part + "': goodput, admission, filter, parts, profile, redis or routes");
		}
		System.exit(0);
	}

	/**
	 * Returns the median of some figures: the middle one, or the mean of the middle two
	 * for an even count. Every figure the benchmarks report is a median of rounds.
	 * @param values the figures
	 * @return their median
	 */
	static double median(double... values) {
		double[] sorted = values.clone();
		Arrays.sort(sorted);
		int middle = sorted.length / 2;
		return (sorted.length % 2 == 1) ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
	}

	/**
	 * Returns the median of each figure over rounds.
	 * @param rounds each round's figures, in the same order
	 * @return the medians, in that order
	 */
	static double[] medians(List<double[]> rounds) {
		double[] medians = new double[rounds.get(0).length];
		for (int i = 0; i < medians.length; i++) {
			int figure = i;
			medians[i] = median(rounds.stream().mapToDouble((round) -> round[figure]).toArray());
		}
		return medians;
	}

}
