package dev.llmquota.actuate;

import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.llmquota.core.QuotaState;

import org.springframework.boot.actuate.endpoint.OperationResponseBody;

/**
 * What {@code /actuator/llmquota} shows: every pool, every provider entry's account and
 * every route.
 *
 * @param pools the pools that are configured or have been called
 * @param accounts the provider entries' shared ceilings
 * @param routes the routes ({@code llm.quota.routes}), and where their calls go
 */
@JsonInclude(JsonInclude.Include.ALWAYS)
public record QuotaReport(List<PoolReport> pools, List<AccountReport> accounts,
		List<RouteReport> routes) implements OperationResponseBody {

	/**
	 * A report without routes.
	 * @param pools the pools
	 * @param accounts the accounts
	 */
	public QuotaReport(List<PoolReport> pools, List<AccountReport> accounts) {
		this(pools, accounts, List.of());
	}

	/**
	 * One route.
	 *
	 * @param name its name
	 * @param url the base URL that addresses it
	 * @param spillAfterMs how long a primary may make a call wait before spill-over
	 * targets are weighed
	 * @param targets its targets, in the order that breaks ties
	 */
	public record RouteReport(String name, String url, long spillAfterMs, List<TargetReport> targets) {

	}

	/**
	 * One target of a route.
	 *
	 * @param provider the provider entry
	 * @param model the model there
	 * @param spillOver whether it is a spill-over
	 * @param state its pool's state: OK, THROTTLED or EXHAUSTED
	 * @param probed whether it takes one call at a time, having no known rate limit
	 * @param callsLastMinute the attempts it took in the last minute
	 * @param shareLastMinute its share of the route's attempts in the last minute
	 * @param skipped why the last choice passed it over, or {@code null}
	 */
	public record TargetReport(String provider, String model, boolean spillOver, QuotaState state, boolean probed,
			long callsLastMinute, double shareLastMinute, String skipped) {

	}

	/**
	 * One pool.
	 *
	 * @param provider the provider entry
	 * @param region its region
	 * @param model the model
	 * @param state OK, THROTTLED or EXHAUSTED
	 * @param binding the dimension that admits the fewest calls per minute for the recent
	 * mix of calls
	 * @param dimensions every limited dimension, the pool's and its account's
	 * @param inFlight calls and tokens held now
	 * @param derived Little's-law bounds from the observed latency
	 * @param lastRateLimit the provider's last rate-limit answer, or {@code null}
	 * @param estimateDrift how far input estimates are from the provider's counts
	 * @param output reserved versus billed output, with a recommended {@code max_tokens}
	 * @param warnings configuration that disagrees with what the provider reports
	 */
	@JsonInclude(JsonInclude.Include.ALWAYS)
	public record PoolReport(String provider, String region, String model, QuotaState state, String binding,
			Map<String, Object> dimensions, InFlight inFlight, Derived derived, RateLimit lastRateLimit,
			Drift estimateDrift, Output output, List<String> warnings, Map<String, ClassReport> priority, String mode,
			ShadowReport shadow) {

	}

	/**
	 * A money budget of the entry, in the account's currency.
	 *
	 * @param budget the budget per period
	 * @param spent what the calls of this period cost (reservations of calls in flight
	 * included)
	 * @param left what is left
	 * @param reset when the period ends (ISO-8601)
	 * @param warning whether the spent share reached {@code budget.warn-at}
	 */
	public record BudgetDimension(double budget, double spent, double left, String reset, boolean warning) {

	}

	/**
	 * What shadow mode saw: what enforce mode would have done to the pool's calls.
	 *
	 * @param calls calls checked so far
	 * @param delayed how many enforce mode would have delayed
	 * @param meanDelayMs the mean of those delays
	 * @param maxDelayMs the longest
	 * @param refused how many enforce mode would have refused
	 */
	public record ShadowReport(long calls, long delayed, long meanDelayMs, long maxDelayMs, long refused) {

	}

	/**
	 * How the calls of one class (interactive or batch) wait.
	 *
	 * @param waiting calls waiting for admission now
	 * @param admitted calls admitted so far
	 * @param meanWaitMs their mean wait for admission
	 * @param maxWaitMs their longest wait
	 */
	public record ClassReport(int waiting, long admitted, long meanWaitMs, long maxWaitMs) {

	}

	/**
	 * One provider entry's account.
	 *
	 * @param provider the provider entry
	 * @param region its region
	 * @param state OK, THROTTLED or EXHAUSTED
	 * @param dimensions its limited dimensions
	 */
	@JsonInclude(JsonInclude.Include.ALWAYS)
	public record AccountReport(String provider, String region, QuotaState state, Map<String, Object> dimensions) {

	}

	/**
	 * A rate or daily dimension.
	 *
	 * @param limit the published limit, configured or reported
	 * @param enforced {@code limit x headroom}
	 * @param remaining what the provider's latest headers said, else the local books
	 * @param reset when it is full again (ISO-8601), or {@code null}
	 * @param source {@code server} or {@code local}
	 * @param local the client's own bucket
	 */
	@JsonInclude(JsonInclude.Include.ALWAYS)
	public record RateDimension(long limit, long enforced, long remaining, String reset, String source, Local local) {

	}

	/**
	 * The client's own bucket.
	 *
	 * @param remaining units available now (negative while in debt)
	 * @param capacity the most it holds
	 */
	@JsonInclude(JsonInclude.Include.ALWAYS)
	public record Local(long remaining, long capacity) {

	}

	/**
	 * A concurrency limit.
	 *
	 * @param limit the configured limit
	 * @param enforced {@code limit x headroom}, at least 1
	 * @param inUse calls holding a slot now
	 */
	@JsonInclude(JsonInclude.Include.ALWAYS)
	public record GateDimension(long limit, long enforced, long inUse) {

	}

	/**
	 * What calls in flight hold.
	 *
	 * @param requests calls
	 * @param tokens input estimates plus output ceilings
	 */
	@JsonInclude(JsonInclude.Include.ALWAYS)
	public record InFlight(long requests, long tokens) {

	}

	/**
	 * Little's law on the observed latency of whole calls.
	 *
	 * @param latencyMs the latency, request sent to last byte
	 * @param inFlightCalls {@code requests-per-minute / 60 x headroom x latency}
	 * @param inFlightTokens the tightest token bound, each token dimension weighted by
	 * its units
	 */
	@JsonInclude(JsonInclude.Include.ALWAYS)
	public record Derived(long latencyMs, Double inFlightCalls, Long inFlightTokens) {

	}

	/**
	 * The provider's last rate-limit answer.
	 *
	 * @param at when (ISO-8601)
	 * @param dimension the dimension it named, or {@code unknown}
	 * @param waitMs the wait it asked for
	 */
	@JsonInclude(JsonInclude.Include.ALWAYS)
	public record RateLimit(String at, String dimension, long waitMs) {

	}

	/**
	 * Input estimate drift.
	 *
	 * @param ratio actual / estimated, weighted toward recent calls; later estimates are
	 * multiplied by it
	 * @param samples calls that reported their input
	 */
	@JsonInclude(JsonInclude.Include.ALWAYS)
	public record Drift(double ratio, long samples) {

	}

	/**
	 * Reserved versus billed output.
	 *
	 * @param reserved output tokens reserved by calls that reported usage
	 * @param billed output tokens they were billed
	 * @param p99 the 99th percentile of generated output, or {@code null}
	 * @param recommendedMaxTokens a {@code max_tokens} that fits what is generated (p99
	 * plus a fifth), shown when calls reserve over four times what they use; or
	 * {@code null}
	 */
	@JsonInclude(JsonInclude.Include.ALWAYS)
	public record Output(long reserved, long billed, Long p99, Long recommendedMaxTokens) {

	}

}
