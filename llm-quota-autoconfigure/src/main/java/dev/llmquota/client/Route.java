package dev.llmquota.client;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;

import dev.llmquota.DurationText;
import dev.llmquota.LlmQuota;
import dev.llmquota.QuotaWaitTimeoutException;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.Mode;
import dev.llmquota.core.Headroom;
import dev.llmquota.core.Pool;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.core.QuotaPermit;
import dev.llmquota.core.QuotaState;
import dev.llmquota.provider.DialectId;

/**
 * One logical model over several provider entries ({@code llm.quota.routes.<name>}): each
 * attempt of a call goes to the target whose admission is earliest across every bucket it
 * would take, asked of the engine ({@link QuotaEngine#headroom}); ties go to the earlier
 * target, so a provider's prompt cache keeps its calls. A target whose quota is spent, or
 * that would make the call wait past its {@code max-wait}, is not chosen; a target with
 * no known rate limit for the model (configured or learned from its headers) takes one
 * call at a time until its headers tell its limits.
 */
public final class Route {

	private final RouteSpec spec;

	private final QuotaEngine engine;

	private final List<Target> targets;

	private final String prefix;

	/**
	 * A route over the entries.
	 * @param probes the probes of deployments with no known limit, by pool, shared by
	 * every route
	 */
	Route(RouteSpec spec, List<ProviderEntry> entries, QuotaEngine engine, Map<Pool, AtomicReference<Object>> probes) {
		this.spec = spec;
		this.engine = engine;
		List<Target> targets = new ArrayList<>();
		for (int i = 0; i < entries.size(); i++) {
			targets.add(new Target(spec.targets().get(i), entries.get(i), probes));
		}
		this.targets = List.copyOf(targets);
		this.prefix = LlmQuota.route(spec.name());
	}

	/**
	 * Returns the route's name.
	 * @return the name
	 */
	public String name() {
		return this.spec.name();
	}

	/**
	 * Returns how long a primary may make a call wait before spill-over targets are
	 * weighed.
	 * @return the spill-after
	 */
	public Duration spillAfter() {
		return this.spec.spillAfter();
	}

	/**
	 * Returns the route's targets, in their configured order.
	 * @return the targets
	 */
	public List<Target> targets() {
		return this.targets;
	}

	/**
	 * The length of the route's path ({@code /routes/<name>}), before its operation's.
	 */
	int pathLength() {
		return URI.create(this.prefix).getRawPath().length();
	}

	/** Whether a URL addresses this route. */
	boolean addresses(String url) {
		return url.startsWith(this.prefix)
				&& (url.length() == this.prefix.length() || "/?#".indexOf(url.charAt(this.prefix.length())) >= 0);
	}

	/** How soon a call that only a probe out holds back looks again. */
	static final long PROBE_POLL_NANOS = 50_000_000L;

	/**
	 * The choice of an attempt's target.
	 *
	 * @param target the target, or {@code null} when only a probe out holds the call
	 * back: then it looks again after {@code lookAgainNanos}
	 * @param waitNanos how long the target would make it wait, as estimated
	 * @param lookAgainNanos when to look again, without a target
	 * @param probe whether the call holds the target's probe: it has no known rate limit
	 */
	record Choice(Target target, long waitNanos, long lookAgainNanos, boolean probe) {

	}

	/**
	 * Chooses the target of an attempt: the earliest to admit it, primaries first while
	 * one admits it within {@code spill-after}.
	 * @param call the call
	 * @param leftNanos what is left of its {@code max-wait}
	 * @return the choice
	 * @throws QuotaWaitTimeoutException when no target can admit it within that
	 */
	Choice choose(RouteCall call, long leftNanos) {
		Target primary = null;
		Target best = null;
		long primaryWait = Long.MAX_VALUE;
		long bestWait = Long.MAX_VALUE;
		StringBuilder why = new StringBuilder();
		long soonest = Long.MAX_VALUE;
		long[] waits = new long[this.targets.size()];
		String[] bindings = new String[this.targets.size()];
		for (int i = 0; i < this.targets.size(); i++) {
			Target target = this.targets.get(i);
			CallPlan plan = call.planFor(target);
			Pool pool = plan.pool();
			Headroom headroom = this.engine.headroom(pool, plan.demand(), plan.priority());
			// spent, as the books say or as it told this call (a reset of now leaves it
			// unmarked in the books)
			boolean spent = headroom.never() || call.saidSpent(target);
			long wait = headroom.waitNanos();
			if (pool.spec().mode() == Mode.SHADOW) {
				// its books rank it as enforcing would, but it holds no call back:
				// never passed over for its wait alone, nor for a spent quota
				wait = spent ? leftNanos : Math.min(wait, leftNanos);
				spent = false;
			}
			target.untrusted = !trusted(pool);
			boolean probeOut = target.untrusted && target.probing();
			if (probeOut && !spent) {
				// free once its probe ends
				wait = Math.max(wait, pool.latencyNanos());
			}
			String skipped = spent ? "quota spent (" + QuotaState.EXHAUSTED + ")"
					: (wait > leftNanos)
							? ((wait > headroom.waitNanos()) ? PROBING : headroom.binding()) + " for "
									+ DurationText.of(Duration.ofNanos(wait)) + ", past the call's max-wait"
							: probeOut ? PROBING : null;
			target.skipped = skipped;
			waits[i] = wait;
			bindings[i] = (wait > headroom.waitNanos()) ? PROBING : headroom.binding();
			if (spent || wait > leftNanos) {
				why.append((why.length() > 0) ? "; " : "").append(target).append(": ").append(skipped);
				soonest = spent ? soonest : Math.min(soonest, wait);
				continue;
			}
			if (!target.spillOver() && wait < primaryWait) {
				primary = target;
				primaryWait = wait;
			}
			if (wait < bestWait) {
				best = target;
				bestWait = wait;
			}
		}
		Target chosen = (primary != null && primaryWait <= this.spec.spillAfter().toNanos()) ? primary : best;
		if (chosen == null) {
			throw new QuotaWaitTimeoutException("route " + name(), null, name(), null,
					"every target of the route (" + why + ")", Duration.ofNanos(Math.max(0, leftNanos)),
					(soonest == Long.MAX_VALUE) ? null : Duration.ofNanos(soonest));
		}
		long wait = (chosen == primary) ? primaryWait : bestWait;
		for (int i = 0; i < this.targets.size(); i++) {
			Target target = this.targets.get(i);
			if (target != chosen && target.skipped == null && waits[i] > wait) {
				// passed over for one that admits sooner
				target.skipped = bindings[i] + " for " + DurationText.of(Duration.ofNanos(waits[i]));
			}
		}
		if (!chosen.untrusted) {
			return new Choice(chosen, wait, 0, false);
		}
		if (!chosen.takeProbe()) {
			// the earliest is a target whose probe is out: look again soon
			return new Choice(null, wait, Math.max(1, Math.min(PROBE_POLL_NANOS, wait)), false);
		}
		return new Choice(chosen, wait, 0, true);
	}

	private static final String PROBING = "probing: no known rate limit, one call at a time";

	/**
	 * Whether a pool has a rate limit, configured or learned, of its own or its entry's,
	 * or does not enforce: shadow mode and off hold no call back, not for a probe either.
	 */
	private static boolean trusted(Pool pool) {
		if (pool.spec().mode() != Mode.ENFORCE) {
			return true;
		}
		for (Dimension dimension : pool.limits().asMap().keySet()) {
			if (dimension.kind() == Dimension.Kind.RATE) {
				return true;
			}
		}
		for (Dimension dimension : pool.account().limits().asMap().keySet()) {
			if (dimension.kind() == Dimension.Kind.RATE) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Rewrites a URL addressing the route into the target's: the part after the route's
	 * name is the operation ({@code /v1/chat/completions} or {@code /chat/completions},
	 * {@code /v1/messages}), sent under the entry's base URL, or under Azure's deployment
	 * with its api-version (its Responses API under its v1 API).
	 */
	URI uriFor(Target target, URI routed) {
		String url = routed.toString();
		String rest = url.substring(this.prefix.length());
		String query = null;
		int q = rest.indexOf('?');
		if (q >= 0) {
			query = rest.substring(q + 1);
			rest = rest.substring(0, q);
		}
		if (rest.equals("/v1") || rest.startsWith("/v1/")) {
			rest = rest.substring(3);
		}
		String base = target.entry.provider().baseUrl().toString();
		base = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
		if (target.entry.dialect().id() == DialectId.AZURE_OPENAI
				&& (rest.equals("/responses") || rest.startsWith("/responses/"))) {
			// Azure serves the Responses API only on its v1 API, the deployment named by
			// the body's model, no api-version needed
			return URI.create(base + "/openai/v1" + rest + ((query != null) ? "?" + query : ""));
		}
		if (target.entry.dialect().id() == DialectId.AZURE_OPENAI) {
			String version = "api-version=" + target.spec.apiVersion();
			if (query != null && (query.startsWith("api-version=") || query.contains("&api-version="))) {
				version = null;
			}
			String joined = (query == null) ? version : (version == null) ? query : query + "&" + version;
			return URI.create(base + "/openai/deployments/" + target.model() + rest + "?" + joined);
		}
		// a base URL with a version of its own (/v1, Gemini's /v1beta/openai) takes the
		// operation under it; one without (a host, Groq's /openai) under /v1
		String versioned = VERSIONED.matcher(target.entry.provider().baseUrl().getRawPath()).find() ? base
				: base + "/v1";
		return URI.create(versioned + rest + ((query != null) ? "?" + query : ""));
	}

	/**
	 * A version segment in a base URL's path: {@code /v1}, {@code /v1beta}, {@code /v2}.
	 */
	private static final Pattern VERSIONED = Pattern.compile("/v[0-9]+[a-z0-9]*(/|$)");

	@Override
	public String toString() {
		return "route '" + name() + "'";
	}

	/**
	 * One place a route's calls go: a provider entry and the model there, with what the
	 * endpoint shows of it.
	 */
	public final class Target {

		private static final Object CHOSEN = new Object();

		private final RouteSpec.Target spec;

		private final ProviderEntry entry;

		/**
		 * The probes of deployments with no known limit, by pool: a target's is its
		 * pool's, whichever route goes there and whatever alias it names the model by.
		 */
		private final Map<Pool, AtomicReference<Object>> probes;

		/** This target's probe: chosen, then its permit; looked up on first use. */
		private volatile AtomicReference<Object> probe;

		private final AtomicLong taken = new AtomicLong();

		/** Calls taken per second of the last minute, by second. */
		private final long[] perSecond = new long[60];

		private final long[] secondOf = new long[60];

		private volatile String skipped;

		private final AtomicLong rateLimited = new AtomicLong();

		private final AtomicLong exhausted = new AtomicLong();

		private volatile boolean untrusted;

		Target(RouteSpec.Target spec, ProviderEntry entry, Map<Pool, AtomicReference<Object>> probes) {
			this.spec = spec;
			this.entry = entry;
			this.probes = probes;
		}

		private AtomicReference<Object> probe() {
			AtomicReference<Object> probe = this.probe;
			if (probe == null) {
				probe = this.probes.computeIfAbsent(pool(), (pool) -> new AtomicReference<>());
				this.probe = probe;
			}
			return probe;
		}

		/**
		 * Returns the provider entry.
		 * @return the entry
		 */
		public ProviderEntry entry() {
			return this.entry;
		}

		/**
		 * Returns the model there.
		 * @return the model
		 */
		public String model() {
			return this.spec.model();
		}

		/**
		 * Returns whether the target is a spill-over.
		 * @return whether it is
		 */
		public boolean spillOver() {
			return this.spec.spillOver();
		}

		/**
		 * Returns the target's pool.
		 * @return the pool
		 */
		public Pool pool() {
			return Route.this.engine.pool(this.entry.provider().id(), model());
		}

		/**
		 * Returns why the last choice passed this target over (its quota spent, a wait
		 * past the call's max-wait, a probe out, or a wait longer than the chosen
		 * target's), or {@code null}.
		 * @return the reason
		 */
		public String skipped() {
			return this.skipped;
		}

		/**
		 * Returns whether the target takes one call at a time, having no known rate
		 * limit.
		 * @return whether it is probed
		 */
		public boolean probed() {
			return this.untrusted;
		}

		/**
		 * Returns how many attempts went to this target since start.
		 * @return the count
		 */
		public long taken() {
			return this.taken.get();
		}

		/**
		 * Returns how many attempts went to this target in the last minute.
		 * @return the count
		 */
		public synchronized long takenLastMinute() {
			long second = second();
			long sum = 0;
			for (int i = 0; i < 60; i++) {
				if (second - this.secondOf[i] < 60) {
					sum += this.perSecond[i];
				}
			}
			return sum;
		}

		/**
		 * Returns how many of the route's attempts here the provider rate-limited (429).
		 * @return the count
		 */
		public long rateLimited() {
			return this.rateLimited.get();
		}

		/**
		 * Returns how many of the route's attempts here found a quota spent.
		 * @return the count
		 */
		public long exhausted() {
			return this.exhausted.get();
		}

		/** The provider refused an attempt here: rate-limited, or its quota spent. */
		void refused(boolean spent) {
			((spent) ? this.exhausted : this.rateLimited).incrementAndGet();
		}

		/** An attempt was admitted here; a probe's permit now holds the probe. */
		void took(QuotaPermit permit, boolean probe) {
			this.taken.incrementAndGet();
			synchronized (this) {
				long second = second();
				int slot = (int) Math.floorMod(second, 60L);
				if (this.secondOf[slot] != second) {
					this.secondOf[slot] = second;
					this.perSecond[slot] = 0;
				}
				this.perSecond[slot]++;
			}
			if (probe) {
				probe().compareAndSet(CHOSEN, permit);
			}
		}

		/** A probe chosen here was not admitted: it is free again. */
		void probeNotTaken() {
			probe().compareAndSet(CHOSEN, null);
		}

		/** Whether a probe is out: chosen, or admitted and not ended. */
		private boolean probing() {
			Object current = probe().get();
			if (current instanceof QuotaPermit permit && permit.isReleased()) {
				probe().compareAndSet(current, null);
				return false;
			}
			return current != null;
		}

		private boolean takeProbe() {
			return !probing() && probe().compareAndSet(null, CHOSEN);
		}

		private long second() {
			return Route.this.engine.clock().nanoTime() / 1_000_000_000L;
		}

		@Override
		public String toString() {
			return this.entry.provider().id() + "/" + model();
		}

	}

}
