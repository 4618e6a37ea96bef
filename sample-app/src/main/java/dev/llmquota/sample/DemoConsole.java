package dev.llmquota.sample;

import java.io.PrintStream;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.llmquota.actuate.QuotaReport;
import dev.llmquota.actuate.QuotaReports;
import dev.llmquota.client.Route;
import dev.llmquota.core.Account;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.test.simulator.ProviderSimulator;
import dev.llmquota.test.simulator.RequestRecord;
import dev.llmquota.test.simulator.quota.Dimension;
import dev.llmquota.test.simulator.quota.DimensionState;

/**
 * What the demo prints: a live progress line while a batch runs, and at its end a report
 * per dimension (limit, peak use at the provider, refusals), the estimate drift, and
 * reserved against billed output with the {@code max_tokens} that fits.
 */
final class DemoConsole {

	private static final int BAR = 24;

	private final QuotaEngine engine;

	private final DemoProperties properties;

	private final ProviderSimulator simulator;

	private final PrintStream out;

	/** The provider's enforcement window, over which peak use is measured. */
	private static final long WINDOW_NANOS = 10_000_000_000L;

	DemoConsole(QuotaEngine engine, DemoProperties properties, ProviderSimulator simulator, PrintStream out) {
		this.engine = engine;
		this.properties = properties;
		this.simulator = simulator;
		this.out = out;
	}

	/** Prints one progress line. */
	void progress(BatchJob.Progress progress, long refusals) {
		int done = progress.done().get() + progress.failed().get();
		int filled = (progress.documents() > 0) ? done * BAR / progress.documents() : BAR;
		Account account = this.engine.pool(this.properties.getProvider(), this.properties.getModel()).account();
		String binding = pool().map(QuotaReport.PoolReport::binding).orElse(null);
		// on a terminal the line redraws itself; in a log each line stays
		String end = (System.console() != null) ? "\r" : "%n";
		this.out.printf(Locale.ROOT,
				"%s [%s%s] %3d/%d done | waiting %3d | in flight %2d | binds %s | refusals %d | %ds" + end,
				progress.governed() ? "with llm-quota   " : "without llm-quota", "#".repeat(filled),
				"-".repeat(BAR - filled), done, progress.documents(), this.engine.waiting(account),
				this.engine.inFlight(account), (binding != null) ? binding : "-", refusals,
				progress.elapsed().toSeconds());
	}

	/** Prints the report of a governed batch. */
	void report(BatchJob.Result result) {
		this.out.printf(Locale.ROOT,
				"%n%nllm-quota demo: %d of %d documents summarised in %.1f s (%,.0f tokens a minute billed), %d failed%n",
				result.done(), result.documents(), result.elapsed().toMillis() / 1000.0, result.goodputPerMinute(),
				result.failed());
		if (this.simulator != null) {
			this.out.printf(Locale.ROOT, "  %-26s %10s %9s %9s%n", "dimension", "limit", "peak use", "refusals");
			List<RequestRecord> records = this.simulator.requestLog().records();
			for (DimensionState state : this.simulator.states(this.properties.getModel()).values()) {
				long refused = this.simulator.requestLog()
					.refused()
					.stream()
					.map(RequestRecord::dimension)
					.filter(state.dimension()::equals)
					.count();
				this.out.printf(Locale.ROOT, "  %-26s %10d %8.0f%% %9d%n", state.dimension().id(), state.limit(),
						100 * peakPerMinute(records, state.dimension()) / state.limit(), refused);
			}
		}
		pool().ifPresent((pool) -> {
			this.out.printf(Locale.ROOT,
					"  estimate drift: the provider counted %.2f x the input estimate (%d calls)%n",
					pool.estimateDrift().ratio(), pool.estimateDrift().samples());
			QuotaReport.Output output = pool.output();
			this.out.printf(Locale.ROOT, "  output: %d tokens reserved (max_tokens), %d billed%s%n", output.reserved(),
					output.billed(), (output.recommendedMaxTokens() != null)
							? "; the max_tokens that fits: " + output.recommendedMaxTokens() : "");
		});
	}

	/**
	 * Prints where a route's calls went: each target's attempts and share, and the
	 * refusals of its simulated deployment.
	 */
	void route(Route route, Map<String, ProviderSimulator> deployments) {
		long total = route.targets().stream().mapToLong(Route.Target::taken).sum();
		this.out.printf(Locale.ROOT, "  route %s over %d deployments:%n", route.name(), route.targets().size());
		this.out.printf(Locale.ROOT, "  %-26s %9s %7s %9s%n", "target", "calls", "share", "refusals");
		for (Route.Target target : route.targets()) {
			ProviderSimulator deployment = deployments.get(target.entry().provider().id());
			this.out.printf(Locale.ROOT, "  %-26s %9d %6.0f%% %9s%n", target, target.taken(),
					(total > 0) ? 100.0 * target.taken() / total : 0,
					(deployment != null) ? Integer.toString(deployment.requestLog().refused().size()) : "-");
		}
	}

	/** Prints the governed and ungoverned runs side by side. */
	void contrast(BatchJob.Result without, BatchJob.Result with) {
		this.out.printf(Locale.ROOT, "%n  %-22s %18s %15s%n", "", "without llm-quota", "with llm-quota");
		this.out.printf(Locale.ROOT, "  %-22s %18s %15s%n", "documents done",
				without.done() + " / " + without.documents(), with.done() + " / " + with.documents());
		this.out.printf(Locale.ROOT, "  %-22s %18d %15d%n", "provider refusals", without.refusals(), with.refusals());
		this.out.printf(Locale.ROOT, "  %-22s %17.1fs %14.1fs%n", "time", without.elapsed().toMillis() / 1000.0,
				with.elapsed().toMillis() / 1000.0);
		this.out.printf(Locale.ROOT, "  %-22s %,18.0f %,15.0f%n", "goodput (tokens/min)", without.goodputPerMinute(),
				with.goodputPerMinute());
	}

	/**
	 * Returns the highest rate the provider saw on a dimension, per minute, over any of
	 * its 10-second windows: how close to the limit the batch ran.
	 */
	private static double peakPerMinute(List<RequestRecord> records, Dimension dimension) {
		List<RequestRecord> sent = records.stream()
			.filter((record) -> record.outcome() == RequestRecord.Outcome.COMPLETED)
			.sorted(Comparator.comparingLong(RequestRecord::arrivalNanos))
			.toList();
		double peak = 0;
		double inWindow = 0;
		int first = 0;
		for (RequestRecord record : sent) {
			inWindow += units(record, dimension);
			while (record.arrivalNanos() - sent.get(first).arrivalNanos() >= WINDOW_NANOS) {
				inWindow -= units(sent.get(first++), dimension);
			}
			peak = Math.max(peak, inWindow * 60e9 / WINDOW_NANOS);
		}
		return peak;
	}

	private static double units(RequestRecord record, Dimension dimension) {
		return switch (dimension) {
			case REQUESTS_PER_MINUTE -> 1;
			case INPUT_TOKENS_PER_MINUTE -> record.inputTokens();
			case OUTPUT_TOKENS_PER_MINUTE -> record.outputTokens();
			case TOKENS_PER_MINUTE -> record.inputTokens() + record.outputTokens();
			default -> 0;
		};
	}

	private java.util.Optional<QuotaReport.PoolReport> pool() {
		return new QuotaReports(this.engine).report(this.properties.getProvider())
			.pools()
			.stream()
			.filter((pool) -> pool.model().equals(this.properties.getModel()))
			.findFirst();
	}

}
