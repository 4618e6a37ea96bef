package dev.llmquota.autoconfigure;

import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.llmquota.core.Mode;
import dev.llmquota.core.Priority;
import dev.llmquota.provider.DialectId;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.DeprecatedConfigurationProperty;

/**
 * Configuration properties of llm-quota.
 */
@ConfigurationProperties(prefix = "llm.quota", ignoreUnknownFields = false)
public class LlmQuotaProperties {

	/**
	 * Whether llm-quota governs calls to LLM providers.
	 */
	private boolean enabled = true;

	/**
	 * Where the books live: local (this process) or redis (shared by every replica,
	 * through Spring Boot's reactive Redis connection, spring.data.redis.*).
	 */
	private Backend backend = Backend.LOCAL;

	/**
	 * Share of each published limit the client plans to use, greater than 0 and at most
	 * 1.
	 */
	private double headroom = 0.8;

	/**
	 * Longest a call waits for admission before QuotaWaitTimeoutException.
	 */
	private Duration maxWait = Duration.ofSeconds(30);

	/**
	 * Time after which a call never completed or closed gives its slots back.
	 */
	private Duration leaseTimeout = Duration.ofMinutes(10);

	/**
	 * Most pools created for models not listed in the configuration; least recently used
	 * go first.
	 */
	private int maxPools = 1000;

	/**
	 * Provider entries by id: one account (or subscription) in one region each.
	 */
	private Map<String, Provider> providers = new LinkedHashMap<>();

	/**
	 * Routes by name: one logical model over several provider entries, each call sent to
	 * the target whose admission is earliest. A client addresses a route by the base URL
	 * http://llm-quota.invalid/routes/{name}.
	 */
	private Map<String, Route> routes = new LinkedHashMap<>();

	private final Retry retry = new Retry();

	private final Health health = new Health();

	private final Redis redis = new Redis();

	private final PriorityClasses priority = new PriorityClasses();

	private final ProblemDetails problemDetails = new ProblemDetails();

	/**
	 * Where the books live.
	 */
	public enum Backend {

		/** In this process: each replica counts alone. */
		LOCAL,

		/** In Redis, shared by every replica. */
		REDIS

	}

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public Backend getBackend() {
		return this.backend;
	}

	public void setBackend(Backend backend) {
		this.backend = backend;
	}

	public double getHeadroom() {
		return this.headroom;
	}

	public void setHeadroom(double headroom) {
		this.headroom = headroom;
	}

	public Duration getMaxWait() {
		return this.maxWait;
	}

	public void setMaxWait(Duration maxWait) {
		this.maxWait = maxWait;
	}

	public Duration getLeaseTimeout() {
		return this.leaseTimeout;
	}

	public void setLeaseTimeout(Duration leaseTimeout) {
		this.leaseTimeout = leaseTimeout;
	}

	public int getMaxPools() {
		return this.maxPools;
	}

	public void setMaxPools(int maxPools) {
		this.maxPools = maxPools;
	}

	public Map<String, Provider> getProviders() {
		return this.providers;
	}

	public void setProviders(Map<String, Provider> providers) {
		this.providers = providers;
	}

	public Map<String, Route> getRoutes() {
		return this.routes;
	}

	public void setRoutes(Map<String, Route> routes) {
		this.routes = routes;
	}

	public Retry getRetry() {
		return this.retry;
	}

	/**
	 * One logical model over several provider entries.
	 */
	public static class Route {

		/**
		 * Where the route's calls may go, in the order that breaks ties: a provider entry
		 * and the model there (an Azure deployment name, an OpenAI or Anthropic model
		 * id).
		 */
		private List<Target> targets = new ArrayList<>();

		/**
		 * How long a primary target may make a call wait before a spill-over target is
		 * considered; 0 considers spill-over targets whenever every primary would make
		 * the call wait.
		 */
		private Duration spillAfter = Duration.ZERO;

		public List<Target> getTargets() {
			return this.targets;
		}

		public void setTargets(List<Target> targets) {
			this.targets = targets;
		}

		public Duration getSpillAfter() {
			return this.spillAfter;
		}

		public void setSpillAfter(Duration spillAfter) {
			this.spillAfter = spillAfter;
		}

	}

	/**
	 * One place a route's calls may go.
	 */
	public static class Target {

		/**
		 * Id of the provider entry (a key under llm.quota.providers).
		 */
		private @Nullable String provider;

		/**
		 * Model there: the Azure deployment name, or the OpenAI or Anthropic model id
		 * written into the call's body.
		 */
		private @Nullable String model;

		/**
		 * Whether the target is used only when no primary target can admit the call
		 * within the route's spill-after.
		 */
		private boolean spillOver;

		/**
		 * Azure OpenAI api-version of calls sent to this target, when the call does not
		 * name one.
		 */
		private String apiVersion = "2024-10-21";

		public @Nullable String getProvider() {
			return this.provider;
		}

		public void setProvider(@Nullable String provider) {
			this.provider = provider;
		}

		public @Nullable String getModel() {
			return this.model;
		}

		public void setModel(@Nullable String model) {
			this.model = model;
		}

		public boolean isSpillOver() {
			return this.spillOver;
		}

		public void setSpillOver(boolean spillOver) {
			this.spillOver = spillOver;
		}

		public String getApiVersion() {
			return this.apiVersion;
		}

		public void setApiVersion(String apiVersion) {
			this.apiVersion = apiVersion;
		}

	}

	public Health getHealth() {
		return this.health;
	}

	public Redis getRedis() {
		return this.redis;
	}

	public PriorityClasses getPriority() {
		return this.priority;
	}

	public ProblemDetails getProblemDetails() {
		return this.problemDetails;
	}

	/**
	 * What a web application answers when an llm-quota exception escapes a controller.
	 */
	public static class ProblemDetails {

		/**
		 * Whether llm-quota's exceptions that escape a controller (Spring MVC or WebFlux)
		 * answer 429 or 503 with a problem detail and Retry-After, instead of 500. The
		 * application's own exception handlers win either way.
		 */
		private boolean enabled = true;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

	}

	/**
	 * Interactive and batch calls.
	 */
	public static class PriorityClasses {

		/**
		 * Share of every rate dimension that batch calls may not take while interactive
		 * calls wait, so interactive traffic always finds room; 0 switches the reserve
		 * off.
		 */
		private double interactiveReserve = 0.2;

		/**
		 * How long after the last interactive call that had to wait the reserve is lent
		 * to batch calls.
		 */
		private Duration lendAfter = Duration.ofSeconds(10);

		public double getInteractiveReserve() {
			return this.interactiveReserve;
		}

		public void setInteractiveReserve(double interactiveReserve) {
			this.interactiveReserve = interactiveReserve;
		}

		public Duration getLendAfter() {
			return this.lendAfter;
		}

		public void setLendAfter(Duration lendAfter) {
			this.lendAfter = lendAfter;
		}

	}

	/**
	 * Money budgets of a provider entry, in the account's currency, calendar-aligned in
	 * its day-zone; calls are charged from their models' cost.
	 */
	public static class Budget {

		/**
		 * Most money the entry's calls may cost per calendar day.
		 */
		private @Nullable Double perDay;

		/**
		 * Most money the entry's calls may cost per calendar month.
		 */
		private @Nullable Double perMonth;

		/**
		 * Share of a budget spent at which a warning is logged and shown on the endpoint.
		 */
		private double warnAt = 0.8;

		public @Nullable Double getPerDay() {
			return this.perDay;
		}

		public void setPerDay(@Nullable Double perDay) {
			this.perDay = perDay;
		}

		public @Nullable Double getPerMonth() {
			return this.perMonth;
		}

		public void setPerMonth(@Nullable Double perMonth) {
			this.perMonth = perMonth;
		}

		public double getWarnAt() {
			return this.warnAt;
		}

		public void setWarnAt(double warnAt) {
			this.warnAt = warnAt;
		}

	}

	/**
	 * What a model's tokens cost, per million, in the account's currency.
	 */
	public static class Cost {

		/**
		 * Price of a million input tokens.
		 */
		private @Nullable Double inputPerMillion;

		/**
		 * Price of a million output tokens.
		 */
		private @Nullable Double outputPerMillion;

		/**
		 * Price of a million input tokens read from the provider's prompt cache; the
		 * input price when unset.
		 */
		private @Nullable Double cachedInputPerMillion;

		/**
		 * Price of a million input tokens written to the provider's prompt cache; 1.25
		 * times the input price for Anthropic's models, on its API and on Bedrock (a
		 * five-minute cache write), the input price for others, when unset.
		 */
		private @Nullable Double cacheWriteInputPerMillion;

		private @Nullable Double input;

		private @Nullable Double output;

		private @Nullable Double cachedInput;

		public @Nullable Double getInputPerMillion() {
			return this.inputPerMillion;
		}

		public void setInputPerMillion(@Nullable Double inputPerMillion) {
			this.inputPerMillion = inputPerMillion;
		}

		public @Nullable Double getOutputPerMillion() {
			return this.outputPerMillion;
		}

		public void setOutputPerMillion(@Nullable Double outputPerMillion) {
			this.outputPerMillion = outputPerMillion;
		}

		public @Nullable Double getCachedInputPerMillion() {
			return this.cachedInputPerMillion;
		}

		public void setCachedInputPerMillion(@Nullable Double cachedInputPerMillion) {
			this.cachedInputPerMillion = cachedInputPerMillion;
		}

		public @Nullable Double getCacheWriteInputPerMillion() {
			return this.cacheWriteInputPerMillion;
		}

		public void setCacheWriteInputPerMillion(@Nullable Double cacheWriteInputPerMillion) {
			this.cacheWriteInputPerMillion = cacheWriteInputPerMillion;
		}

		/**
		 * Price of a million input tokens; the short name of input-per-million.
		 * @return the price
		 */
		@DeprecatedConfigurationProperty(replacement = "llm.quota.providers.*.models.*.cost.input-per-million",
				reason = "CONTRACT names the price input-per-million; the short name stays an alias")
		public @Nullable Double getInput() {
			return this.input;
		}

		public void setInput(@Nullable Double input) {
			this.input = input;
		}

		/**
		 * Price of a million output tokens; the short name of output-per-million.
		 * @return the price
		 */
		@DeprecatedConfigurationProperty(replacement = "llm.quota.providers.*.models.*.cost.output-per-million",
				reason = "CONTRACT names the price output-per-million; the short name stays an alias")
		public @Nullable Double getOutput() {
			return this.output;
		}

		public void setOutput(@Nullable Double output) {
			this.output = output;
		}

		/**
		 * Price of a million cached input tokens; the short name of
		 * cached-input-per-million.
		 * @return the price
		 */
		@DeprecatedConfigurationProperty(replacement = "llm.quota.providers.*.models.*.cost.cached-input-per-million",
				reason = "CONTRACT names the price cached-input-per-million; the short name stays an alias")
		public @Nullable Double getCachedInput() {
			return this.cachedInput;
		}

		public void setCachedInput(@Nullable Double cachedInput) {
			this.cachedInput = cachedInput;
		}

	}

	/**
	 * The Redis store (backend: redis).
	 */
	public static class Redis {

		/**
		 * What a replica does while Redis does not answer.
		 */
		public enum OnFailure {

			/** Go on with local books and a share of each limit. */
			LOCAL,

			/** Refuse calls until Redis answers again. */
			REJECT

		}

		/**
		 * What a replica does while Redis does not answer: local (go on with local books
		 * and local-share of each limit) or reject (refuse calls with
		 * QuotaStoreUnavailableException).
		 */
		private OnFailure onFailure = OnFailure.LOCAL;

		/**
		 * The most of each limit one replica may use while it falls back to local books.
		 * It takes one over the replicas live for the provider entry (they say so in
		 * Redis every second) where that is less.
		 */
		private double localShare = 0.25;

		/**
		 * How long a shared in-flight slot stays taken without renewal: a replica that
		 * dies gives its slots back after this. Live replicas renew every third of it.
		 */
		private Duration leaseTime = Duration.ofSeconds(30);

		/**
		 * How long Redis may take: an answer later than twice this is late, and a ping
		 * given this long then decides whether Redis is down (the replica falls back) or
		 * slow (the call waits for its answer, up to its max-wait).
		 */
		private Duration timeout = Duration.ofMillis(500);

		/**
		 * The longest wait between Lettuce's attempts to reconnect after Redis went away
		 * (Lettuce's own grows to 30 s). Replicas go back to the shared books within
		 * about this long of Redis answering again; until each does, the ones already
		 * back use Redis's whole books while the others still use their local share.
		 * Applies to the connection Spring Boot builds from spring.data.redis.*; an
		 * application with its own Lettuce ClientResources keeps its own delay.
		 */
		private Duration reconnectDelay = Duration.ofSeconds(1);

		public OnFailure getOnFailure() {
			return this.onFailure;
		}

		public void setOnFailure(OnFailure onFailure) {
			this.onFailure = onFailure;
		}

		public double getLocalShare() {
			return this.localShare;
		}

		public void setLocalShare(double localShare) {
			this.localShare = localShare;
		}

		public Duration getLeaseTime() {
			return this.leaseTime;
		}

		public void setLeaseTime(Duration leaseTime) {
			this.leaseTime = leaseTime;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

		public Duration getReconnectDelay() {
			return this.reconnectDelay;
		}

		public void setReconnectDelay(Duration reconnectDelay) {
			this.reconnectDelay = reconnectDelay;
		}

	}

	/**
	 * Retry of provider rate-limit answers and handling of spent quotas.
	 */
	public static class Retry {

		/**
		 * Attempts in all, the first included.
		 */
		private int maxAttempts = 4;

		/**
		 * Wait before retrying when the provider names none.
		 */
		private Duration initialBackoff = Duration.ofMillis(500);

		/**
		 * Longest wait before a retry; a provider asking for longer fails the call at
		 * once.
		 */
		private Duration maxBackoff = Duration.ofSeconds(60);

		/**
		 * Provider wait at or above which an answer means a spent quota, not a rate
		 * limit.
		 */
		private Duration exhaustedThreshold = Duration.ofHours(1);

		/**
		 * While a quota is spent with no known reset, one call goes through this often to
		 * see whether it is back.
		 */
		private Duration exhaustedProbeInterval = Duration.ofMinutes(5);

		public int getMaxAttempts() {
			return this.maxAttempts;
		}

		public void setMaxAttempts(int maxAttempts) {
			this.maxAttempts = maxAttempts;
		}

		public Duration getInitialBackoff() {
			return this.initialBackoff;
		}

		public void setInitialBackoff(Duration initialBackoff) {
			this.initialBackoff = initialBackoff;
		}

		public Duration getMaxBackoff() {
			return this.maxBackoff;
		}

		public void setMaxBackoff(Duration maxBackoff) {
			this.maxBackoff = maxBackoff;
		}

		public Duration getExhaustedThreshold() {
			return this.exhaustedThreshold;
		}

		public void setExhaustedThreshold(Duration exhaustedThreshold) {
			this.exhaustedThreshold = exhaustedThreshold;
		}

		public Duration getExhaustedProbeInterval() {
			return this.exhaustedProbeInterval;
		}

		public void setExhaustedProbeInterval(Duration exhaustedProbeInterval) {
			this.exhaustedProbeInterval = exhaustedProbeInterval;
		}

	}

	/**
	 * The llmQuota health component.
	 */
	public static class Health {

		/**
		 * Status of the llmQuota health component while a pool is EXHAUSTED.
		 */
		private ExhaustedStatus exhaustedStatus = ExhaustedStatus.UP;

		public ExhaustedStatus getExhaustedStatus() {
			return this.exhaustedStatus;
		}

		public void setExhaustedStatus(ExhaustedStatus exhaustedStatus) {
			this.exhaustedStatus = exhaustedStatus;
		}

		/**
		 * A status of the llmQuota health component while a pool is EXHAUSTED.
		 */
		public enum ExhaustedStatus {

			/**
			 * Up, with the exhausted pools in the details: the replica stays in rotation.
			 */
			UP,

			/** Out of service: load balancers that read health take the replica out. */
			OUT_OF_SERVICE,

			/** Down. */
			DOWN

		}

	}

	/**
	 * Limits of one scope; a dimension left unset is not limited there.
	 */
	public static class Limits {

		/**
		 * Requests per minute.
		 */
		private @Nullable Long requestsPerMinute;

		/**
		 * Combined input and output tokens per minute.
		 */
		private @Nullable Long tokensPerMinute;

		/**
		 * Input tokens per minute.
		 */
		private @Nullable Long inputTokensPerMinute;

		/**
		 * Output tokens per minute.
		 */
		private @Nullable Long outputTokensPerMinute;

		/**
		 * Requests in flight at once.
		 */
		private @Nullable Long concurrentRequests;

		/**
		 * Requests per calendar day in the provider entry's day zone.
		 */
		private @Nullable Long requestsPerDay;

		/**
		 * Combined tokens per calendar day in the provider entry's day zone.
		 */
		private @Nullable Long tokensPerDay;

		public @Nullable Long getRequestsPerMinute() {
			return this.requestsPerMinute;
		}

		public void setRequestsPerMinute(@Nullable Long requestsPerMinute) {
			this.requestsPerMinute = requestsPerMinute;
		}

		public @Nullable Long getTokensPerMinute() {
			return this.tokensPerMinute;
		}

		public void setTokensPerMinute(@Nullable Long tokensPerMinute) {
			this.tokensPerMinute = tokensPerMinute;
		}

		public @Nullable Long getInputTokensPerMinute() {
			return this.inputTokensPerMinute;
		}

		public void setInputTokensPerMinute(@Nullable Long inputTokensPerMinute) {
			this.inputTokensPerMinute = inputTokensPerMinute;
		}

		public @Nullable Long getOutputTokensPerMinute() {
			return this.outputTokensPerMinute;
		}

		public void setOutputTokensPerMinute(@Nullable Long outputTokensPerMinute) {
			this.outputTokensPerMinute = outputTokensPerMinute;
		}

		public @Nullable Long getConcurrentRequests() {
			return this.concurrentRequests;
		}

		public void setConcurrentRequests(@Nullable Long concurrentRequests) {
			this.concurrentRequests = concurrentRequests;
		}

		public @Nullable Long getRequestsPerDay() {
			return this.requestsPerDay;
		}

		public void setRequestsPerDay(@Nullable Long requestsPerDay) {
			this.requestsPerDay = requestsPerDay;
		}

		public @Nullable Long getTokensPerDay() {
			return this.tokensPerDay;
		}

		public void setTokensPerDay(@Nullable Long tokensPerDay) {
			this.tokensPerDay = tokensPerDay;
		}

	}

	/**
	 * One provider entry.
	 */
	public static class Provider {

		/**
		 * Base URL; calls whose URL starts with it are governed.
		 */
		private @Nullable String baseUrl;

		/**
		 * Wire dialect of the provider. Inferred from the base URL when unset
		 * (api.openai.com, *.openai.azure.com, api.anthropic.com,
		 * bedrock-runtime.*.amazonaws.com, generativelanguage.googleapis.com,
		 * *-aiplatform.googleapis.com, port 11434); openai elsewhere.
		 */
		private @Nullable DialectId dialect;

		/**
		 * Region label; every limit of the entry is scoped to it.
		 */
		private @Nullable String region;

		/**
		 * Zone whose calendar days count for per-day limits and budgets.
		 */
		private ZoneId dayZone = ZoneId.of("UTC");

		/**
		 * Whether the output ceiling is charged at admission. Default per dialect: false
		 * for anthropic, true otherwise.
		 */
		private @Nullable Boolean reserveMaxTokens;

		/**
		 * Whether the unused part of the output ceiling is given back when usage arrives.
		 */
		private boolean refundUnusedOutput = true;

		/**
		 * Whether cached input tokens count toward input limits. Default per dialect:
		 * false for anthropic and bedrock, true otherwise.
		 */
		private @Nullable Boolean cachedInputCounts;

		/**
		 * Whether the Little's-law in-flight bounds (rate x latency) are enforced.
		 */
		private boolean inFlightGate = true;

		/**
		 * Header a call must carry to belong to this entry, when several accounts share
		 * one URL.
		 */
		private @Nullable MatchHeader matchHeader;

		/**
		 * Headers set on every call this entry governs, replacing the client's own:
		 * credentials per entry, such as api-key (Azure OpenAI), x-api-key (Anthropic) or
		 * Authorization (OpenAI, "Bearer ..."). Their values are never logged, never
		 * shown on the endpoint and never put in an exception message.
		 */
		private Map<String, String> headers = new LinkedHashMap<>();

		/**
		 * Whether OpenAI-style streaming calls that do not ask for usage get
		 * stream_options.include_usage added, so their usage can be reconciled; the
		 * caller then receives one more final chunk with empty choices.
		 */
		private boolean addStreamUsage;

		private final Budget budget = new Budget();

		/**
		 * What llm-quota does with this entry's calls: enforce (wait for admission and
		 * handle refusals), shadow (compute and report what it would have delayed or
		 * refused, delay nothing) or off (pass them untouched).
		 */
		private Mode mode = Mode.ENFORCE;

		/**
		 * What a refused (429) attempt keeps charged. Default per dialect: requests for
		 * openai (it documents that refused requests count against its per-minute limit),
		 * none otherwise (the others document nothing of the kind).
		 */
		private @Nullable ChargeRefused chargeRefused;

		/**
		 * Bucket capacity in time: capacity = enforced rate x burst window.
		 */
		private Duration burstWindow = Duration.ofSeconds(2);

		/**
		 * Ceilings shared by all models of this entry.
		 */
		private Limits account = new Limits();

		/**
		 * Pools by model id; the key 'default' is a template for unlisted models.
		 */
		private Map<String, Model> models = new LinkedHashMap<>();

		public @Nullable String getBaseUrl() {
			return this.baseUrl;
		}

		public void setBaseUrl(@Nullable String baseUrl) {
			this.baseUrl = baseUrl;
		}

		public @Nullable DialectId getDialect() {
			return this.dialect;
		}

		public void setDialect(@Nullable DialectId dialect) {
			this.dialect = dialect;
		}

		public @Nullable String getRegion() {
			return this.region;
		}

		public void setRegion(@Nullable String region) {
			this.region = region;
		}

		public ZoneId getDayZone() {
			return this.dayZone;
		}

		public void setDayZone(ZoneId dayZone) {
			this.dayZone = dayZone;
		}

		public @Nullable Boolean getReserveMaxTokens() {
			return this.reserveMaxTokens;
		}

		public void setReserveMaxTokens(@Nullable Boolean reserveMaxTokens) {
			this.reserveMaxTokens = reserveMaxTokens;
		}

		public boolean isRefundUnusedOutput() {
			return this.refundUnusedOutput;
		}

		public void setRefundUnusedOutput(boolean refundUnusedOutput) {
			this.refundUnusedOutput = refundUnusedOutput;
		}

		public @Nullable Boolean getCachedInputCounts() {
			return this.cachedInputCounts;
		}

		public void setCachedInputCounts(@Nullable Boolean cachedInputCounts) {
			this.cachedInputCounts = cachedInputCounts;
		}

		public boolean isInFlightGate() {
			return this.inFlightGate;
		}

		public void setInFlightGate(boolean inFlightGate) {
			this.inFlightGate = inFlightGate;
		}

		public Duration getBurstWindow() {
			return this.burstWindow;
		}

		public void setBurstWindow(Duration burstWindow) {
			this.burstWindow = burstWindow;
		}

		public @Nullable MatchHeader getMatchHeader() {
			return this.matchHeader;
		}

		public void setMatchHeader(@Nullable MatchHeader matchHeader) {
			this.matchHeader = matchHeader;
		}

		public Map<String, String> getHeaders() {
			return this.headers;
		}

		public void setHeaders(Map<String, String> headers) {
			this.headers = headers;
		}

		public @Nullable ChargeRefused getChargeRefused() {
			return this.chargeRefused;
		}

		public void setChargeRefused(@Nullable ChargeRefused chargeRefused) {
			this.chargeRefused = chargeRefused;
		}

		public Mode getMode() {
			return this.mode;
		}

		public void setMode(Mode mode) {
			this.mode = mode;
		}

		public Budget getBudget() {
			return this.budget;
		}

		public boolean isAddStreamUsage() {
			return this.addStreamUsage;
		}

		public void setAddStreamUsage(boolean addStreamUsage) {
			this.addStreamUsage = addStreamUsage;
		}

		public Limits getAccount() {
			return this.account;
		}

		public void setAccount(Limits account) {
			this.account = account;
		}

		public Map<String, Model> getModels() {
			return this.models;
		}

		public void setModels(Map<String, Model> models) {
			this.models = models;
		}

	}

	/**
	 * What a refused attempt keeps charged.
	 */
	public enum ChargeRefused {

		/** Nothing: the provider does not count refused calls. */
		NONE,

		/**
		 * Its per-minute request: the provider counts refused requests against its
		 * per-minute limit. Tokens, money and per-day counts are given back.
		 */
		REQUESTS

	}

	/**
	 * A header that selects a provider entry.
	 */
	public static class MatchHeader {

		/**
		 * Header name, for example OpenAI-Project.
		 */
		private @Nullable String name;

		/**
		 * Exact value of the header.
		 */
		private @Nullable String value;

		public @Nullable String getName() {
			return this.name;
		}

		public void setName(@Nullable String name) {
			this.name = name;
		}

		public @Nullable String getValue() {
			return this.value;
		}

		public void setValue(@Nullable String value) {
			this.value = value;
		}

	}

	/**
	 * One model's pool.
	 */
	public static class Model extends Limits {

		/**
		 * Model id, when the key cannot hold it (dots, colons).
		 */
		private @Nullable String name;

		/**
		 * Other model ids that share this pool.
		 */
		private List<String> aliases = new ArrayList<>();

		/**
		 * Whole-call latency assumed for the in-flight bounds until one is observed.
		 */
		private Duration expectedLatency = Duration.ofSeconds(2);

		/**
		 * Output ceiling of a call that names none; at least 1.
		 */
		private long defaultMaxTokens = 4096;

		/**
		 * How many times each output token counts (Bedrock: 5 for some models).
		 */
		private int outputBurndown = 1;

		/**
		 * Default admission class of this model's calls.
		 */
		private Priority priority = Priority.INTERACTIVE;

		/**
		 * This model's mode, if it differs from its provider entry's: enforce, shadow or
		 * off.
		 */
		private @Nullable Mode mode;

		private final Cost cost = new Cost();

		/**
		 * Bucket capacity in time for this model; the provider entry's when unset.
		 */
		private @Nullable Duration burstWindow;

		/**
		 * Input estimator: o200k_base, cl100k_base, or chars:N (N characters per token,
		 * 0.25 to 10). Default per dialect: o200k_base for openai and azure-openai,
		 * chars:4 otherwise.
		 */
		private @Nullable String tokenizer;

		public @Nullable String getName() {
			return this.name;
		}

		public void setName(@Nullable String name) {
			this.name = name;
		}

		public List<String> getAliases() {
			return this.aliases;
		}

		public void setAliases(List<String> aliases) {
			this.aliases = aliases;
		}

		public Duration getExpectedLatency() {
			return this.expectedLatency;
		}

		public void setExpectedLatency(Duration expectedLatency) {
			this.expectedLatency = expectedLatency;
		}

		public long getDefaultMaxTokens() {
			return this.defaultMaxTokens;
		}

		public void setDefaultMaxTokens(long defaultMaxTokens) {
			this.defaultMaxTokens = defaultMaxTokens;
		}

		public int getOutputBurndown() {
			return this.outputBurndown;
		}

		public void setOutputBurndown(int outputBurndown) {
			this.outputBurndown = outputBurndown;
		}

		public @Nullable Mode getMode() {
			return this.mode;
		}

		public void setMode(@Nullable Mode mode) {
			this.mode = mode;
		}

		public Cost getCost() {
			return this.cost;
		}

		public Priority getPriority() {
			return this.priority;
		}

		public void setPriority(Priority priority) {
			this.priority = priority;
		}

		public @Nullable Duration getBurstWindow() {
			return this.burstWindow;
		}

		public void setBurstWindow(@Nullable Duration burstWindow) {
			this.burstWindow = burstWindow;
		}

		public @Nullable String getTokenizer() {
			return this.tokenizer;
		}

		public void setTokenizer(@Nullable String tokenizer) {
			this.tokenizer = tokenizer;
		}

	}

}
