package dev.llmquota.actuate;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.llmquota.LlmQuota;
import dev.llmquota.client.Route;
import dev.llmquota.core.Account;
import dev.llmquota.core.Binding;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.BucketState;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.Limits;
import dev.llmquota.core.Mode;
import dev.llmquota.core.Pool;
import dev.llmquota.core.PoolSnapshot;
import dev.llmquota.core.PoolStats;
import dev.llmquota.core.Priority;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.core.QuotaSettings;
import dev.llmquota.core.ServerLimit;

/**
 * Assembles {@link QuotaReport}s from the engine's books. Shows limits, counts and times
 * only: no header other than rate-limit values, no prompt, no key.
 */
public final class QuotaReports {

	private final QuotaEngine engine;

	private final List<Route> routes;

	/**
	 * Creates the assembler of an engine without routes.
	 * @param engine the engine
	 */
	public QuotaReports(QuotaEngine engine) {
		this(engine, List.of());
	}

	/**
	 * Creates the assembler.
	 * @param engine the engine
	 * @param routes the routes
	 */
	public QuotaReports(QuotaEngine engine, List<Route> routes) {
		this.engine = engine;
		this.routes = routes;
	}

	/**
	 * Returns the report of one route.
	 * @param route the route
	 * @return its report
	 */
	public QuotaReport.RouteReport route(Route route) {
		List<QuotaReport.TargetReport> targets = new ArrayList<>();
		long[] calls = new long[route.targets().size()];
		long total = 0;
		for (int i = 0; i < calls.length; i++) {
			calls[i] = route.targets().get(i).takenLastMinute();
			total += calls[i];
		}
		for (int i = 0; i < calls.length; i++) {
			Route.Target target = route.targets().get(i);
			targets.add(new QuotaReport.TargetReport(target.entry().provider().id(), target.model(), target.spillOver(),
					this.engine.state(target.pool()), target.probed(), calls[i],
					(total == 0) ? 0 : Math.round(1000.0 * calls[i] / total) / 1000.0, target.skipped()));
		}
		return new QuotaReport.RouteReport(route.name(), LlmQuota.route(route.name()), route.spillAfter().toMillis(),
				targets);
	}

	/**
	 * Returns the report of every provider entry, or of one.
	 * @param provider the provider entry's id, or {@code null} for all
	 * @return the report
	 */
	public QuotaReport report(String provider) {
		List<QuotaReport.PoolReport> pools = new ArrayList<>();
		for (Pool pool : this.engine.pools()) {
			if (provider == null || provider.equals(pool.provider())) {
				pools.add(pool(pool));
			}
		}
		List<QuotaReport.AccountReport> accounts = new ArrayList<>();
		for (Account account : this.engine.accounts()) {
			if (provider == null || provider.equals(account.provider().id())) {
				accounts.add(account(account));
			}
		}
		List<QuotaReport.RouteReport> routes = new ArrayList<>();
		for (Route route : this.routes) {
			if (provider == null
					|| route.targets().stream().anyMatch((t) -> provider.equals(t.entry().provider().id()))) {
				routes.add(route(route));
			}
		}
		return new QuotaReport(pools, accounts, routes);
	}

	private QuotaReport.PoolReport pool(Pool pool) {
		QuotaSettings settings = this.engine.config().settings();
		PoolSnapshot snapshot = this.engine.snapshot(pool);
		Map<String, Object> dimensions = new LinkedHashMap<>();
		List<String> warnings = new ArrayList<>();
		Map<Dimension, ServerLimit> server = pool.serverLimits();
		// what the provider said is shown only while it holds (until its reset)
		Map<Dimension, ServerLimit> current = pool.currentServerLimits(this.engine.clock().nanoTime(),
				this.engine.clock().instant());
		for (PoolSnapshot.BucketSnapshot bucket : snapshot.buckets()) {
			BucketSpec spec = bucket.bucket();
			boolean own = spec.scope() == BucketSpec.Scope.POOL;
			Limits limits = own ? pool.limits() : pool.account().limits();
			ServerLimit reported = own ? server.get(spec.dimension()) : null;
			String key = key(spec.scope(), spec.dimension());
			if (spec.dimension().countsMoney()) {
				dimensions.put(key,
						budget(spec, new BucketState(bucket.remaining(), spec.capacity(), bucket.untilFull().toNanos()),
								pool.account().provider().budgetWarnAt(),
								this.engine.clock().instant().plus(bucket.untilFull())));
				continue;
			}
			dimensions.put(key, rate(spec, limits, own ? current.get(spec.dimension()) : null, bucket.remaining(),
					bucket.untilFull()));
			if (reported != null && reported.limit() != null && !pool.learned(spec.dimension())
					&& !reported.limit().equals(limits.asMap().get(spec.dimension()))) {
				warnings.add(spec.dimension().id() + " is configured as " + limits.asMap().get(spec.dimension())
						+ " but the provider reports " + reported.limit());
			}
		}
		for (PoolSnapshot.GateSnapshot gate : snapshot.gates()) {
			if (!gate.derived()) {
				boolean own = gate.scope() == BucketSpec.Scope.POOL;
				Limits limits = own ? pool.limits() : pool.account().limits();
				String key = key(gate.scope(), gate.dimension());
				dimensions.put(key, new QuotaReport.GateDimension(limits.asMap().get(gate.dimension()), gate.capacity(),
						gate.inUse()));
			}
		}
		Binding.Bound binding = Binding.of(pool, settings, snapshot.buckets(), this.engine.clock().nanoTime(),
				this.engine.penalizedElsewhere(pool));
		PoolStats stats = pool.stats();
		PoolStats.RateLimited last = stats.lastRateLimit();
		return new QuotaReport.PoolReport(pool.provider(), pool.region(), pool.model(), this.engine.state(pool),
				(binding != null) ? key(binding.scope(), binding.dimension()) : null, dimensions,
				new QuotaReport.InFlight(stats.inFlightCalls(), stats.inFlightTokens()), derived(pool, settings),
				(last != null)
						? new QuotaReport.RateLimit(last.at().toString(),
								(last.dimension() != null) ? last.dimension().id() : "unknown", last.delay().toMillis())
						: null,
				new QuotaReport.Drift(Math.round(pool.drift().ratio() * 1000) / 1000.0, pool.drift().samples()),
				output(stats), warnings, classes(pool), pool.spec().mode().name().toLowerCase(Locale.ROOT),
				shadow(pool));
	}

	/**
	 * A dimension's key in a pool's report: an account's bucket is {@code account:...}.
	 */
	private static String key(BucketSpec.Scope scope, Dimension dimension) {
		return (scope == BucketSpec.Scope.POOL) ? dimension.id() : "account:" + dimension.id();
	}

	private static QuotaReport.ShadowReport shadow(Pool pool) {
		if (pool.spec().mode() != Mode.SHADOW) {
			return null;
		}
		PoolStats.Shadow shadow = pool.stats().shadow();
		return new QuotaReport.ShadowReport(shadow.calls(), shadow.delayed(),
				Duration.ofNanos(shadow.meanDelayNanos()).toMillis(),
				Duration.ofNanos(shadow.maxDelayNanos()).toMillis(), shadow.refused());
	}

	private Map<String, QuotaReport.ClassReport> classes(Pool pool) {
		Map<String, QuotaReport.ClassReport> classes = new LinkedHashMap<>();
		for (Priority priority : Priority.values()) {
			PoolStats.ClassWaits waits = pool.stats().waits(priority);
			classes.put(priority.name().toLowerCase(Locale.ROOT),
					new QuotaReport.ClassReport(this.engine.waiting(pool, priority), waits.admitted(),
							Duration.ofNanos(waits.meanWaitNanos()).toMillis(),
							Duration.ofNanos(waits.maxWaitNanos()).toMillis()));
		}
		return classes;
	}

	private QuotaReport.AccountReport account(Account account) {
		Map<String, Object> dimensions = new LinkedHashMap<>();
		long now = this.engine.clock().nanoTime();
		Instant wallNow = this.engine.clock().instant();
		for (BucketSpec bucket : account.buckets()) {
			BucketState state = this.engine.store().state(bucket, now, wallNow);
			if (bucket.dimension().countsMoney()) {
				dimensions.put(bucket.dimension().id(), budget(bucket, state, account.provider().budgetWarnAt(),
						wallNow.plusNanos(state.nanosUntilFull())));
				continue;
			}
			dimensions.put(bucket.dimension().id(),
					rate(bucket, account.limits(), null, state.remaining(), Duration.ofNanos(state.nanosUntilFull())));
		}
		return new QuotaReport.AccountReport(account.provider().id(), account.provider().region(),
				this.engine.state(account), dimensions);
	}

	private QuotaReport.RateDimension rate(BucketSpec bucket, Limits limits, ServerLimit reported, long localRemaining,
			Duration untilFull) {
		Long configured = limits.asMap().get(bucket.dimension());
		long limit = (configured != null) ? configured : bucket.enforced();
		QuotaReport.Local local = new QuotaReport.Local(localRemaining, bucket.capacity());
		if (reported != null && reported.remaining() != null) {
			return new QuotaReport.RateDimension(limit, bucket.enforced(), reported.remaining(),
					(reported.reset() != null) ? reported.reset().toString() : null, "server", local);
		}
		String reset = (untilFull.isZero()) ? null : this.engine.clock().instant().plus(untilFull).toString();
		return new QuotaReport.RateDimension(limit, bucket.enforced(), bucket.inProviderTerms(limit, localRemaining),
				reset, "local", local);
	}

	/** A money budget, in the account's currency. */
	private static QuotaReport.BudgetDimension budget(BucketSpec bucket, BucketState state, double warnAt,
			Instant reset) {
		long spent = bucket.enforced() - state.remaining();
		return new QuotaReport.BudgetDimension(bucket.enforced() / 1e6, spent / 1e6,
				Math.max(0, state.remaining()) / 1e6, reset.toString(), spent >= warnAt * bucket.enforced());
	}

	private static QuotaReport.Derived derived(Pool pool, QuotaSettings settings) {
		long latency = pool.latencyNanos();
		double minutes = latency / 60e9;
		Double calls = null;
		Long tokens = null;
		for (Limits limits : new Limits[] { pool.limits(), pool.account().limits() }) {
			for (Map.Entry<Dimension, Long> limit : limits.asMap().entrySet()) {
				if (limit.getKey().kind() != Dimension.Kind.RATE) {
					continue;
				}
				double bound = settings.enforced(limit.getValue()) * minutes;
				if (limit.getKey() == Dimension.REQUESTS_PER_MINUTE) {
					calls = (calls == null) ? bound : Math.min(calls, bound);
				}
				else {
					long floor = (long) Math.floor(bound);
					tokens = (tokens == null) ? floor : Math.min(tokens, floor);
				}
			}
		}
		return new QuotaReport.Derived(Duration.ofNanos(latency).toMillis(),
				(calls != null) ? Math.round(calls * 10) / 10.0 : null, tokens);
	}

	private static QuotaReport.Output output(PoolStats stats) {
		long p99 = stats.outputP99();
		Long recommended = null;
		if (p99 >= 0 && stats.outputSamples() >= 20 && stats.reservedOutput() > 4 * Math.max(1, stats.billedOutput())) {
			recommended = (long) Math.ceil(p99 * 1.2);
		}
		return new QuotaReport.Output(stats.reservedOutput(), stats.billedOutput(), (p99 >= 0) ? p99 : null,
				recommended);
	}

}
