package dev.llmquota.client;

import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.stream.Collectors;

import dev.llmquota.LlmQuota;
import dev.llmquota.UnroutableCallException;
import dev.llmquota.core.Account;
import dev.llmquota.core.Demand;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.Mode;
import dev.llmquota.core.Pool;
import dev.llmquota.core.PoolSpec;
import dev.llmquota.core.Priority;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.core.QuotaEvents;
import dev.llmquota.core.QuotaPermit;
import dev.llmquota.core.kernel.Arith;
import dev.llmquota.provider.Dialect;
import dev.llmquota.provider.DialectId;
import dev.llmquota.provider.HeaderLookup;
import dev.llmquota.provider.InputText;
import dev.llmquota.provider.LogOnce;
import dev.llmquota.provider.ParsedRequest;
import dev.llmquota.tokens.TokenEstimator;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The one implementation of governing a provider call, behind every HTTP adapter: which
 * provider entry and pool a call belongs to, what it reserves, its admission, and the
 * {@link GovernedCall} that follows its answer.
 */
public final class LlmQuotaCalls {

	/**
	 * How much of a refusal's body an adapter reads to classify it and hands on to its
	 * caller; a larger refusal is classified by its status and headers alone.
	 */
	public static final int MAX_REFUSAL_BYTES = 1024 * 1024;

	private static final JsonMapper mapper = JsonMapper.shared();

	private final QuotaEngine engine;

	private final EntryLookup lookup;

	/** Set while this thread sends a governed attempt of a blocking call. */
	private static final ThreadLocal<Boolean> SENDING = new ThreadLocal<>();

	private final Map<String, TokenEstimator> estimators = new ConcurrentHashMap<>();

	private final RetrySettings retry;

	private final RetryPolicy retryPolicy;

	private final RefusalHandling refusals;

	private final List<ProviderEntry> routes;

	/**
	 * The probe of each deployment (its pool) with no known limit, shared by every route
	 * that goes there: one call at a time reaches it, whichever route it came by.
	 */
	private final Map<Pool, AtomicReference<Object>> probes = new ConcurrentHashMap<>();

	/**
	 * Creates the calls facade with the default retry settings.
	 * @param engine the quota engine
	 */
	public LlmQuotaCalls(QuotaEngine engine) {
		this(engine, RetrySettings.DEFAULTS);
	}

	/**
	 * Creates the calls facade.
	 * @param engine the quota engine
	 * @param retry how refusals are retried
	 */
	public LlmQuotaCalls(QuotaEngine engine, RetrySettings retry) {
		this(engine, retry, Map.of());
	}

	/**
	 * Creates the calls facade.
	 * @param engine the quota engine
	 * @param retry how refusals are retried
	 * @param credentials the headers set on the calls of each provider entry, by id
	 */
	public LlmQuotaCalls(QuotaEngine engine, RetrySettings retry, Map<String, Credentials> credentials) {
		this(engine, retry, credentials, List.of());
	}

	/**
	 * Creates the calls facade.
	 * @param engine the quota engine
	 * @param retry how refusals are retried
	 * @param credentials the headers set on the calls of each provider entry, by id
	 * @param routes the routes, each over provider entries of the engine's configuration
	 */
	public LlmQuotaCalls(QuotaEngine engine, RetrySettings retry, Map<String, Credentials> credentials,
			List<RouteSpec> routes) {
		this.engine = engine;
		this.lookup = new EntryLookup(engine.config(), credentials);
		this.routes = routes.stream().map(this::routeEntry).toList();
		this.retry = retry;
		this.retryPolicy = new RetryPolicy(retry);
		this.refusals = new RefusalHandling(engine, retry);
		engine.addListener(new QuotaEvents() {

			@Override
			public void shadowRefused(Pool pool, Throwable refusal) {
				LogOnce.warn("shadow: " + pool + ": " + refusal.getClass().getSimpleName(),
						"Shadow mode: llm-quota would have refused a call to provider '" + pool.provider()
								+ "', model '" + pool.model() + "' (" + refusal.getMessage()
								+ "); it went to the provider");
			}

			/**
			 * A model the configuration does not list, of an entry with a budget, and no
			 * price for it (no priced template): its calls spend nothing of the budget.
			 * Listed ones are named at start-up.
			 */
			@Override
			public void poolCreated(Pool pool) {
				boolean listed = engine.config().providers().get(pool.provider()).models().containsKey(pool.model());
				if (!listed && pool.spec().accounting().cost() == null && pool.account().limits().hasBudget()) {
					// once an entry: model ids come from callers, and are many
					LogOnce.warn("unpriced " + pool.provider(), "llm-quota: model '" + pool.model()
							+ "' of llm.quota.providers." + pool.provider() + " is not listed and has no"
							+ " price, so its calls spend nothing of the entry's budget: list it with a cost, or give"
							+ " models.default a cost");
				}
			}

			@Override
			public void budgetWarning(Account account, Dimension dimension, long spentMicros, long limitMicros,
					Instant reset) {
				LogOnce.warn("budget: " + account.provider().id() + ": " + dimension.id() + ": " + reset,
						String.format(Locale.ROOT,
								"Provider '%s' has spent %.2f of its %s of %.2f (%.0f%%); calls fail fast once it is"
										+ " spent, until %s",
								account.provider().id(), spentMicros / 1e6, dimension.id(), limitMicros / 1e6,
								100.0 * spentMicros / limitMicros, reset));
			}

		});
	}

	private ProviderEntry routeEntry(RouteSpec spec) {
		List<ProviderEntry> entries = spec.targets().stream().map((target) -> {
			ProviderEntry entry = this.lookup.byId(target.provider());
			if (entry == null) {
				throw new IllegalArgumentException(
						"Route '" + spec.name() + "' names no provider entry '" + target.provider() + "'");
			}
			return entry;
		}).toList();
		ProviderEntry first = entries.get(0);
		return new ProviderEntry(first.provider(), first.dialect(), Credentials.NONE,
				new Route(spec, entries, this.engine, this.probes));
	}

	/**
	 * Returns the routes.
	 * @return the routes, in their configured order
	 */
	public List<Route> routes() {
		return this.routes.stream().map(ProviderEntry::route).toList();
	}

	/**
	 * Returns how refusals are retried.
	 * @return the retry settings
	 */
	public RetrySettings retrySettings() {
		return this.retry;
	}

	/**
	 * Returns the retry policy every adapter runs its attempts under.
	 * @return the policy
	 */
	public RetryPolicy retryPolicy() {
		return this.retryPolicy;
	}

	/**
	 * Decides what an attempt's refusal or failure calls for, and takes it into the
	 * books: a rate limit holds the pool for the provider's wait, a spent quota marks the
	 * pool (or account) exhausted. Only answers of status 400 and above need deciding.
	 * @param call the attempt
	 * @param status the HTTP status
	 * @param headers the answer's headers
	 * @param body the answer's body
	 * @param attempt the attempt's number, from 1
	 * @param deadline the monotonic time by which the call must be admitted, from its
	 * {@code max-wait}
	 * @return what to do
	 */
	public Outcome answered(GovernedCall call, int status, HeaderLookup headers, byte[] body, int attempt,
			long deadline) {
		return this.refusals.answered(call, status, headers, body, attempt, deadline);
	}

	/**
	 * Decides what a refusal that came inside a stream after a 200 calls for, before any
	 * of the stream reached the caller, and takes it into the books as
	 * {@link #answered(GovernedCall, int, HeaderLookup, byte[], int, long)} does; the
	 * attempt ends as a refused one.
	 * @param call the attempt
	 * @param head the start of the stream, which holds the refusal
	 * @param headers the answer's headers
	 * @param attempt the attempt's number, from 1
	 * @param deadline the monotonic time by which the call must be admitted
	 * @return what to do
	 */
	public Outcome refusedInStream(GovernedCall call, StreamHead head, HeaderLookup headers, int attempt,
			long deadline) {
		try {
			// the penalty is in the books before the attempt's slots go back
			return this.refusals.answered(call, head.refusal(), 200, headers, attempt, deadline);
		}
		finally {
			call.onRefusedInStream();
		}
	}

	/**
	 * Starts reading the head of a stream that may refuse its call after a 200, or
	 * returns {@code null} for any other answer.
	 * @param plan the call's plan
	 * @param status the answer's status
	 * @return the head to feed, or {@code null}
	 */
	public StreamHead head(CallPlan plan, int status) {
		boolean held = status == 200 && plan.refusesInStream() && plan.pool().spec().mode() == Mode.ENFORCE;
		return held ? new StreamHead(plan.dialect(), this.engine.clock().instant()) : null;
	}

	/**
	 * Returns the engine.
	 * @return the engine
	 */
	public QuotaEngine engine() {
		return this.engine;
	}

	/**
	 * Returns the provider entry that governs a call, or {@code null} if none does (the
	 * call then passes through untouched). Only calls that send a body (POST) and spend a
	 * model's quota are governed: not file uploads, batch jobs nor token counting
	 * ({@link Dialect#spendsQuota}). A route serves model calls only: any other call
	 * addressed to one fails here.
	 * @param method the HTTP method
	 * @param uri the URL
	 * @param headers the request's headers
	 * @param attributes the request's attributes
	 * @return the entry, or {@code null}
	 * @throws UnroutableCallException for a call to a route that spends no model's quota
	 */
	public ProviderEntry entry(String method, URI uri, HeaderLookup headers, Function<String, Object> attributes) {
		if (Boolean.TRUE.equals(bool(attributes.apply(LlmQuota.SKIP)))) {
			return null;
		}
		if (!this.routes.isEmpty()) {
			String url = uri.toString();
			for (ProviderEntry route : this.routes) {
				if (route.route().addresses(url)) {
					return routed(route, method, uri);
				}
			}
		}
		if (!"POST".equalsIgnoreCase(method)) {
			return null;
		}
		Object provider = attributes.apply(LlmQuota.PROVIDER);
		if (provider != null) {
			ProviderEntry entry = this.lookup.byId(provider.toString());
			if (entry == null) {
				LogOnce.warn("attribute provider " + provider, "No provider entry '" + provider
						+ "' under llm.quota.providers (named by the PROVIDER attribute); the call is matched by URL");
			}
			else {
				return spending(entry, uri);
			}
		}
		return spending(this.lookup.match(uri, headers), uri);
	}

	/**
	 * A route's entry for a model call. Any other call (a file upload, a batch, a
	 * listing) has no one target to go to, a file uploaded to one deployment being
	 * unknown to the others, and fails saying so, rather than going to the first target
	 * charged as a model call.
	 */
	private static ProviderEntry routed(ProviderEntry route, String method, URI uri) {
		String path = (uri.getRawPath() != null) ? uri.getRawPath() : "";
		int below = route.route().pathLength();
		if ("POST".equalsIgnoreCase(method) && route.dialect().spendsQuota(path, below)) {
			return route;
		}
		String targets = route.route()
			.targets()
			.stream()
			.map((target) -> target.entry().provider().id() + " (" + target.entry().provider().baseUrl() + ")")
			.distinct()
			.collect(Collectors.joining(", "));
		throw new UnroutableCallException(route.route().name(),
				"Route '" + route.route().name() + "' serves model calls only: " + method.toUpperCase(Locale.ROOT) + " "
						+ path.substring(Math.min(below, path.length()))
						+ " spends no model's quota, and no one target serves it (a file uploaded to one deployment is"
						+ " unknown to the others). Send it to a provider entry's base-url: " + targets);
	}

	private static ProviderEntry spending(ProviderEntry entry, URI uri) {
		if (entry == null) {
			return null;
		}
		String path = (uri.getRawPath() != null) ? uri.getRawPath() : "";
		return entry.dialectAt(path).spendsQuota(path, entry.below(path)) ? entry : null;
	}

	/**
	 * Returns the provider entry of a call whose client does not know its URL where
	 * llm-quota sees it (Anthropic's SDK resolves its base URL below its interceptors):
	 * the entry the {@code PROVIDER} attribute names, else the only entry of the dialect.
	 * With several and none named, the call is not governed, and one WARN says how to
	 * name it.
	 * @param dialect the client's dialect
	 * @param path the call's path, without a host
	 * @param attributes the call's attributes
	 * @return the entry, or {@code null}
	 */
	public ProviderEntry entryOf(DialectId dialect, URI path, Function<String, Object> attributes) {
		Object provider = attributes.apply(LlmQuota.PROVIDER);
		if (provider != null) {
			ProviderEntry named = this.lookup.byId(provider.toString());
			if (named != null) {
				return spending(named, path);
			}
		}
		List<ProviderEntry> candidates = this.lookup.ofDialect(dialect);
		if (candidates.size() == 1) {
			return spending(candidates.get(0), path);
		}
		LogOnce.warn("entry of " + dialect,
				"A " + dialect.name().toLowerCase(Locale.ROOT) + " client's call names no URL llm-quota can match, and "
						+ candidates.size()
						+ " provider entries have that dialect: it is not governed. Name the entry with"
						+ " LlmQuota.with(LlmQuota.PROVIDER, \"<entry>\") around the call, or bind it to the client:"
						+ " llmQuotaAnthropicInterceptor.with(LlmQuota.PROVIDER, \"<entry>\")");
		return null;
	}

	/**
	 * Reads a call's body: model, output ceiling and input estimate. A body that is not
	 * JSON is sent as it is and estimated by its length.
	 * @param entry the provider entry
	 * @param uri the URL
	 * @param body the serialised body
	 * @param attributes the request's attributes
	 * @return the plan
	 */
	public CallPlan plan(ProviderEntry entry, URI uri, byte[] body, Function<String, Object> attributes) {
		Dialect dialect = entry.dialectAt(uri.getRawPath());
		ParsedRequest request = parse(dialect, body);
		if (entry.route() != null) {
			RouteCall call = new RouteCall(entry.route(), this::plan, request, body, uri, attributes);
			return call.planFor(entry.route().targets().get(0));
		}
		return plan(entry, request, uri, body, attributes);
	}

	private CallPlan plan(ProviderEntry entry, ParsedRequest request, URI uri, byte[] body,
			Function<String, Object> attributes) {
		Dialect dialect = entry.dialectAt(uri.getRawPath());
		try {
			return plan(entry, dialect, request, uri, body, attributes);
		}
		catch (RuntimeException ex) {
			LogOnce.warn(dialect.id().id() + ": unexpected request", "llm-quota could not read a " + dialect.id().id()
					+ " request (" + ex.getMessage() + "); it estimates it from its length");
			return plan(entry, dialect, null, uri, body, attributes);
		}
	}

	private CallPlan plan(ProviderEntry entry, Dialect dialect, ParsedRequest request, URI uri, byte[] body,
			Function<String, Object> attributes) {
		JsonNode json = (request != null) ? request.fields() : null;
		Object modelAttribute = attributes.apply(LlmQuota.MODEL);
		String model = (modelAttribute != null) ? modelAttribute.toString() : dialect.model(uri, json);
		if (model == null || model.isBlank()) {
			LogOnce.warn(entry.provider().id() + ": no model",
					"A call to provider '" + entry.provider().id() + "' names no model; it is accounted to 'unknown'");
			model = "unknown";
		}
		Pool pool = this.engine.pool(entry.provider().id(), model);
		PoolSpec spec = pool.spec();
		TokenEstimator estimator = this.estimators.computeIfAbsent(spec.tokenizer(), TokenEstimator::of);
		long raw;
		if (request != null) {
			InputText input = request.input();
			raw = estimator.estimate(input.text(), input.structure(), input.messages(), input.counted());
		}
		else {
			raw = TokenEstimator.of("chars:4").count(new String(body, java.nio.charset.StandardCharsets.UTF_8));
		}
		// an endpoint that generates nothing (embeddings) reserves no output
		boolean generates = dialect.generates(uri, json);
		Long ceiling = (json != null) ? dialect.outputCeiling(json) : null;
		// every choice a call asks for may generate its ceiling
		long output = !generates ? 0 : Arith.mulDiv((ceiling != null) ? ceiling : spec.defaultMaxTokens(),
				(json != null) ? dialect.choices(json) : 1, 1);
		Demand demand = new Demand(pool.drift().correct(raw), output);
		if (json != null && dialect.storedInput(json)) {
			// the provider counts input the body does not carry: nothing to compare with
			raw = 0;
		}
		boolean streaming = generates && dialect.streaming(uri, json);
		byte[] sent = (streaming && entry.provider().addStreamUsage()) ? withStreamUsage(dialect, uri, json, body)
				: body;
		return new CallPlan(entry, dialect, pool, demand, raw, estimator, generates, streaming,
				streaming && dialect.refusesInStream(uri), dialect.framing(streaming), sent,
				priority(attributes.apply(LlmQuota.PRIORITY)), maxWait(attributes.apply(LlmQuota.MAX_WAIT)), uri, null);
	}

	/**
	 * Returns when a call's wait for admission ends, over all its attempts: its
	 * {@code MAX_WAIT} or {@code max-wait}, cut to {@code limit} if that is shorter.
	 * @param plan the call's plan
	 * @param limit a bound of the HTTP stack's own (a call timeout), or {@code null}
	 * @return the monotonic deadline
	 */
	public long deadline(CallPlan plan, Duration limit) {
		Duration maxWait = (plan.maxWait() != null) ? plan.maxWait() : this.engine.config().settings().maxWait();
		if (limit != null && !limit.isNegative() && !limit.isZero() && limit.compareTo(maxWait) < 0) {
			maxWait = limit;
		}
		return this.engine.clock().nanoTime() + maxWait.toNanos();
	}

	/**
	 * Returns whether this thread is sending a governed attempt of a blocking call: a
	 * client's own retry below the adapter (Apache HttpClient's) leaves it to llm-quota,
	 * however the call was told governed (its URL, its PROVIDER attribute, a scope).
	 * @return whether it is
	 */
	public static boolean sendingAttempt() {
		return SENDING.get() != null;
	}

	/**
	 * Runs a call on a blocking HTTP stack: each attempt waits for admission (the thread
	 * parks, holding no lock), is sent, and its answer is followed; a refusal is
	 * classified, then retried after the provider's wait, failed, or handed on.
	 * @param <R> the stack's response type
	 * @param plan the call's plan
	 * @param deadline when the call's wait for admission ends
	 * @param exchange the stack's part
	 * @return the answer for the caller
	 * @throws IOException if an attempt got no answer
	 */
	public <R> R exchange(CallPlan plan, long deadline, BlockingExchange<R> exchange) throws IOException {
		return this.retryPolicy.blocking(plan, (number) -> attempt(plan, deadline, exchange, number));
	}

	/**
	 * Waits on this thread for a blocking call's admission, leaving the line at once when
	 * its caller cancels it meanwhile (it would hold back the calls behind it until
	 * admitted). The permit and the end of the wait (a cancel, the thread interrupted)
	 * may cross: a permit granted as the wait ended never reaches a call, and whichever
	 * side comes second gives it back whole.
	 * @param cancelled whether the caller cancelled the call, or {@code null}
	 */
	private QuotaPermit admitted(CallPlan plan, long deadline, BooleanSupplier cancelled) throws IOException {
		AtomicReference<Object> handOver = new AtomicReference<>();
		CompletableFuture<QuotaPermit> admission = admit(plan, deadline).doOnNext((permit) -> {
			if (!handOver.compareAndSet(null, permit)) {
				permit.cancel();
			}
		}).toFuture();
		try {
			while (true) {
				try {
					// admitted at once, the usual case, it is done already
					return (cancelled != null) ? admission.get(CANCEL_POLL_MILLIS, TimeUnit.MILLISECONDS)
							: admission.get();
				}
				catch (TimeoutException ex) {
					if (cancelled.getAsBoolean()) {
						throw new IOException("Canceled");
					}
				}
			}
		}
		catch (IOException | RuntimeException ex) {
			giveBack(admission, handOver, ex);
			throw ex;
		}
		catch (InterruptedException ex) {
			giveBack(admission, handOver, ex);
			Thread.currentThread().interrupt();
			throw Exceptions.propagate(ex);
		}
		catch (ExecutionException ex) {
			giveBack(admission, handOver, ex);
			throw (ex.getCause() instanceof RuntimeException failure) ? failure : Exceptions.propagate(ex.getCause());
		}
	}

	/** How often a blocking call waiting for admission looks whether it was cancelled. */
	private static final long CANCEL_POLL_MILLIS = 20;

	/** The wait ended without a permit: one granted meanwhile goes back whole. */
	private static void giveBack(CompletableFuture<QuotaPermit> admission, AtomicReference<Object> handOver,
			Throwable ended) {
		// leaves the line, if still in it
		admission.cancel(false);
		if (handOver.getAndSet(ended) instanceof QuotaPermit granted) {
			granted.cancel();
		}
	}

	/**
	 * One attempt of a blocking call; throws {@link RetryPolicy.RetryAfter} when the
	 * refusal is to be retried.
	 */
	private <R> R attempt(CallPlan plan, long deadline, BlockingExchange<R> exchange, int attempt) throws IOException {
		// Every attempt goes through admission again and reserves again.
		BooleanSupplier cancelled = exchange.cancellation();
		GovernedCall call = start(plan, admitted(plan, deadline, cancelled));
		if (cancelled != null && cancelled.getAsBoolean()) {
			// cancelled once admitted: the stack would refuse to send it
			call.onNotSent();
			throw new IOException("Canceled");
		}
		R response;
		SENDING.set(Boolean.TRUE);
		try {
			response = exchange.send(call.plan());
		}
		catch (IOException | RuntimeException ex) {
			call.onNoResponse();
			throw ex;
		}
		finally {
			SENDING.remove();
		}
		int status;
		HeaderLookup headers;
		try {
			// some stacks read the status only now (SimpleClientHttpRequestFactory):
			// a timeout or a dropped connection here is still "no answer"
			status = exchange.status(response);
			headers = exchange.headers(response);
			call.onResponse(status, headers);
		}
		catch (IOException | RuntimeException ex) {
			call.onNoResponse();
			exchange.discard(response);
			throw ex;
		}
		// the attempt's own plan: a route's admitted target, in its own mode
		StreamHead head = head(call.plan(), status);
		if (head != null) {
			try {
				// held back until it tells whether it refuses the call
				response = exchange.readHead(response, head);
			}
			catch (IOException | RuntimeException ex) {
				call.onAbort();
				throw ex;
			}
		}
		if (status < 400 && (head == null || head.refusal() == null)) {
			return exchange.follow(response, call);
		}
		byte[] refusal;
		try {
			refusal = exchange.readRefusal(response);
		}
		catch (IOException | RuntimeException ex) {
			if (head != null) {
				call.onAbort();
				throw ex;
			}
			RuntimeException failure = unreadRefusal(call, status, headers, attempt, deadline);
			if (failure != null) {
				throw failure;
			}
			if (call.plan().enforced()) {
				// its status and headers, marked: an I/O error would be retried by a
				// client's own retry, running llm-quota's attempts again
				return exchange.passOn(response, new byte[0], true);
			}
			throw ex;
		}
		Outcome outcome;
		if (head != null) {
			outcome = refusedInStream(call, head, headers, attempt, deadline);
		}
		else {
			try {
				// the penalty is in the books before the slots go back
				outcome = answered(call, status, headers, refusal, attempt, deadline);
			}
			finally {
				call.onBody(ByteBuffer.wrap(refusal));
				call.onComplete();
			}
		}
		if (outcome.action() == Outcome.Action.FAIL) {
			// the stack decides what its caller gets: a client that retries
			// gets the provider's answer, marked not to be retried
			return exchange.failAfterAnswer(response, refusal, outcome.failure());
		}
		if (outcome.action() == Outcome.Action.PASS) {
			return exchange.passOn(response, refusal, call.plan().enforced());
		}
		throw RetryPolicy.RetryAfter.of(outcome);
	}

	/**
	 * Ends an attempt whose refusal's body could not be read (the connection dropped in
	 * it): its status says the provider generated nothing, so it ends as a refusal, its
	 * tokens back, classified by its status and headers as an unreadable refusal is, its
	 * wait or exhaustion in the books.
	 * @param call the attempt
	 * @param status the refusal's status
	 * @param headers its headers
	 * @param attempt the attempt's number, from 1
	 * @param deadline the monotonic time by which the call must be admitted
	 * @return what to throw for it: the retry or the contract exception its status and
	 * headers call for, or {@code null} to hand it on (its status and headers, no body,
	 * marked not to be retried where llm-quota decides; in shadow mode the read's own
	 * failure, as it came)
	 */
	public RuntimeException unreadRefusal(GovernedCall call, int status, HeaderLookup headers, int attempt,
			long deadline) {
		Outcome outcome;
		try {
			outcome = answered(call, status, headers, new byte[0], attempt, deadline);
		}
		finally {
			call.onComplete();
		}
		return switch (outcome.action()) {
			case RETRY -> RetryPolicy.RetryAfter.of(outcome);
			case FAIL -> outcome.failure();
			case PASS -> null;
		};
	}

	/**
	 * Waits, without blocking, until an attempt of a call is admitted, no longer than
	 * what is left of the call's {@code max-wait}: retries share one budget. A call
	 * nothing stands before is admitted at once, without the queue.
	 * @param plan the call's plan
	 * @param deadline the monotonic time the call's wait ends
	 * @return the permit
	 */
	public Mono<QuotaPermit> admit(CallPlan plan, long deadline) {
		if (plan.routed()) {
			return plan.route().admit(this.engine, deadline);
		}
		return Mono.defer(() -> {
			QuotaPermit now = this.engine.tryAcquire(plan.pool(), plan.demand(), plan.priority());
			if (now != null) {
				return granted(now);
			}
			long left = Math.max(0, deadline - this.engine.clock().nanoTime());
			return this.engine.acquire(plan.pool(), plan.demand(), plan.priority(), Duration.ofNanos(left));
		});
	}

	/**
	 * A permit taken at once, on its way to the call: a caller that gives up before it
	 * arrives (a timeout, a cancel) never gets it, and it is given back whole rather than
	 * holding its slots until the lease time.
	 */
	static Mono<QuotaPermit> granted(QuotaPermit permit) {
		return Mono.just(permit).doOnDiscard(QuotaPermit.class, QuotaPermit::cancel);
	}

	/**
	 * Starts following an admitted call's answer.
	 * @param plan the call's plan
	 * @param permit its permit
	 * @return the governed call
	 */
	public GovernedCall start(CallPlan plan, QuotaPermit permit) {
		return new GovernedCall(this.engine, plan.routed() ? plan.route().admitted() : plan, permit);
	}

	private static ParsedRequest parse(Dialect dialect, byte[] body) {
		if (body.length == 0) {
			return null;
		}
		try {
			return ParsedRequest.read(body, dialect);
		}
		catch (JacksonException ex) {
			LogOnce.warn(dialect.id().id() + ": unreadable request", "A " + dialect.id().id()
					+ " request body is not JSON; llm-quota sends it unchanged and estimates its input from its length");
			return null;
		}
	}

	/**
	 * Asks an OpenAI-style stream for its final usage chunk; any other body is sent as it
	 * is.
	 */
	private static byte[] withStreamUsage(Dialect dialect, URI uri, JsonNode fields, byte[] body) {
		boolean openAi = dialect.id() == DialectId.OPENAI || dialect.id() == DialectId.AZURE_OPENAI;
		// a Responses stream carries its usage in its last event, and the API takes no
		// include_usage: asked for it, it would refuse the call
		String path = uri.getRawPath();
		if (!openAi || fields == null || (path != null && path.endsWith("/responses"))) {
			return body;
		}
		JsonNode options = fields.get("stream_options");
		if (options != null && options.isObject() && options.path("include_usage").asBoolean(false)) {
			return body;
		}
		// rewritten from the whole request: its fields hold no text
		ObjectNode whole = (ObjectNode) mapper.readTree(body);
		ObjectNode streamOptions = (options != null && options.isObject()) ? (ObjectNode) options.deepCopy()
				: whole.objectNode();
		streamOptions.put("include_usage", true);
		whole.set("stream_options", streamOptions);
		return mapper.writeValueAsBytes(whole);
	}

	private static Boolean bool(Object value) {
		if (value instanceof Boolean bool) {
			return bool;
		}
		return (value != null) ? Boolean.valueOf(value.toString().trim()) : null;
	}

	private static Priority priority(Object value) {
		if (value == null) {
			return null;
		}
		if (value instanceof Priority priority) {
			return priority;
		}
		try {
			return Priority.valueOf(value.toString().trim().toUpperCase(Locale.ROOT));
		}
		catch (IllegalArgumentException ex) {
			LogOnce.warn("attribute priority " + value,
					"Unknown PRIORITY attribute '" + value + "' (INTERACTIVE or BATCH); the model's default applies");
			return null;
		}
	}

	private static Duration maxWait(Object value) {
		if (value instanceof Duration duration && !duration.isNegative()) {
			return duration;
		}
		if (value != null) {
			LogOnce.warn("attribute max-wait", "The MAX_WAIT attribute must be a non-negative Duration, not '" + value
					+ "'; llm.quota.max-wait applies");
		}
		return null;
	}

}
