package dev.llmquota.autoconfigure;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.time.ZoneId;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import dev.llmquota.client.RetrySettings;
import dev.llmquota.core.Accounting;
import dev.llmquota.core.Cost;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.Limits;
import dev.llmquota.core.PoolSpec;
import dev.llmquota.core.Priority;
import dev.llmquota.core.ProviderSpec;
import dev.llmquota.core.QuotaConfig;
import dev.llmquota.core.QuotaSettings;
import dev.llmquota.provider.DialectId;
import dev.llmquota.tokens.TokenEstimator;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Converts the bound properties, once, into the engine's immutable configuration, and
 * rejects values the engine cannot run with, naming the property and the fix.
 */
final class QuotaConfigFactory {

	static final String PREFIX = "llm.quota.";

	private static final Log logger = LogFactory.getLog(QuotaConfigFactory.class);

	/** The model key whose settings are a template for unlisted models. */
	static final String TEMPLATE = "default";

	private QuotaConfigFactory() {
	}

	static QuotaConfig create(LlmQuotaProperties properties) {
		QuotaSettings settings = settings(properties);
		Map<String, ProviderSpec> providers = new LinkedHashMap<>();
		properties.getProviders().forEach((id, provider) -> providers.put(id, provider(id, provider)));
		distinct(providers, properties.getProviders());
		return new QuotaConfig(settings, providers);
	}

	/**
	 * Stops start-up for two entries no call can tell apart: the same base-url (but for
	 * its letters' case and a trailing '/'), the same match-header, or none, and the same
	 * credentials. Two accounts at one URL with their own credentials are told apart by a
	 * route or the PROVIDER attribute: a warning says which governs a call matched by its
	 * URL alone (the first configured).
	 */
	private static void distinct(Map<String, ProviderSpec> providers,
			Map<String, LlmQuotaProperties.Provider> configured) {
		Map<String, String> seen = new HashMap<>();
		providers.forEach((id, provider) -> {
			String url = provider.baseUrl().toString().toLowerCase(Locale.ROOT).replaceAll("/+$", "");
			String key = url + " "
					+ provider.matchHeader()
						.map((header) -> header.name().toLowerCase(Locale.ROOT) + "=" + header.value())
						.orElse("");
			String other = seen.putIfAbsent(key, id);
			if (other != null && !configured.get(id).getHeaders().equals(configured.get(other).getHeaders())) {
				logger.warn("llm-quota: provider entries llm.quota.providers." + other + " and llm.quota.providers."
						+ id + " share base-url " + provider.baseUrl()
						+ " with credentials of their own: a route or the"
						+ " PROVIDER attribute names which one a call spends; a call matched by its URL alone spends '"
						+ other + "' (the first configured). Give one a match-header to tell such calls apart.");
			}
			else if (other != null) {
				throw new InvalidQuotaPropertyException(PREFIX + "providers." + id + ".base-url", provider.baseUrl(),
						"entry '" + other + "' has the same base-url"
								+ (provider.matchHeader().isPresent() ? " and match-header" : "")
								+ ", so no call can tell the two apart",
						"give one of them a match-header (llm.quota.providers." + id
								+ ".match-header.name and .value) that its calls carry, point it at another base-url,"
								+ " or merge the two entries.");
			}
		});
	}

	private static QuotaSettings settings(LlmQuotaProperties properties) {
		double headroom = properties.getHeadroom();
		if (!(headroom > 0 && headroom <= 1)) {
			throw new InvalidQuotaPropertyException(PREFIX + "headroom", headroom,
					"the share must be above 0 and at most 1",
					"set the share of each published limit to plan for, for example 0.8 (the default).");
		}
		positiveOrZero(PREFIX + "max-wait", properties.getMaxWait(), "for example 30s (the default); 0s fails at once");
		positive(PREFIX + "lease-timeout", properties.getLeaseTimeout(), "for example 10m (the default)");
		if (properties.getMaxPools() < 1) {
			throw new InvalidQuotaPropertyException(PREFIX + "max-pools", properties.getMaxPools(),
					"at least one pool is needed", "set a positive number, for example 1000 (the default).");
		}
		positive(PREFIX + "retry.exhausted-probe-interval", properties.getRetry().getExhaustedProbeInterval(),
				"for example 5m (the default)");
		retry(properties.getRetry());
		double reserve = properties.getPriority().getInteractiveReserve();
		if (!(reserve >= 0 && reserve < 1)) {
			throw new InvalidQuotaPropertyException(PREFIX + "priority.interactive-reserve", reserve,
					"the share must be at least 0 and below 1",
					"set the share of each rate dimension kept for interactive calls, for example 0.2 (the default),"
							+ " or 0 for none.");
		}
		positiveOrZero(PREFIX + "priority.lend-after", properties.getPriority().getLendAfter(),
				"for example 10s (the default); 0s lends the reserve at once");
		return new QuotaSettings(headroom, properties.getMaxWait(), properties.getLeaseTimeout(),
				properties.getMaxPools(), properties.getRetry().getExhaustedProbeInterval(), reserve,
				properties.getPriority().getLendAfter());
	}

	/**
	 * Converts the retry settings.
	 * @param retry the bound properties
	 * @return the settings
	 */
	static RetrySettings retry(LlmQuotaProperties.Retry retry) {
		if (retry.getMaxAttempts() < 1) {
			throw new InvalidQuotaPropertyException(PREFIX + "retry.max-attempts", retry.getMaxAttempts(),
					"at least one attempt is needed", "set 1 to never retry, or more, for example 4 (the default).");
		}
		positive(PREFIX + "retry.initial-backoff", retry.getInitialBackoff(), "for example 500ms (the default)");
		positive(PREFIX + "retry.max-backoff", retry.getMaxBackoff(), "for example 60s (the default)");
		positive(PREFIX + "retry.exhausted-threshold", retry.getExhaustedThreshold(), "for example 1h (the default)");
		return new RetrySettings(retry.getMaxAttempts(), retry.getInitialBackoff(), retry.getMaxBackoff(),
				retry.getExhaustedThreshold());
	}

	private static ProviderSpec provider(String id, LlmQuotaProperties.Provider provider) {
		String prefix = PREFIX + "providers." + id + ".";
		URI baseUrl = baseUrl(prefix, provider.getBaseUrl(), provider.getDialect());
		DialectId dialect = dialect(prefix, baseUrl, provider.getDialect());
		ZoneId zone = provider.getDayZone();
		burstWindow(prefix + "burst-window", provider.getBurstWindow());
		Limits account = budgets(prefix + "budget.", provider.getBudget(),
				limits(prefix + "account.", provider.getAccount()));
		Map<String, PoolSpec> models = new LinkedHashMap<>();
		Map<String, String> claimedBy = new HashMap<>();
		PoolSpec template = null;
		for (Map.Entry<String, LlmQuotaProperties.Model> entry : provider.getModels().entrySet()) {
			String key = entry.getKey();
			String modelPrefix = prefix + "models." + key + ".";
			PoolSpec spec = pool(modelPrefix, key, entry.getValue(), provider, dialect);
			if (TEMPLATE.equalsIgnoreCase(key)) {
				if (entry.getValue().getName() != null || !entry.getValue().getAliases().isEmpty()) {
					throw new InvalidQuotaPropertyException(
							modelPrefix + ((entry.getValue().getName() != null) ? "name" : "aliases"),
							(entry.getValue().getName() != null) ? entry.getValue().getName()
									: entry.getValue().getAliases(),
							"the template gives its settings to every unlisted model, each under its own id",
							"remove it from models." + key + ", or list that model under a key of its own.");
				}
				template = spec;
				continue;
			}
			// a call's model is matched in any case: ids are claimed in lower case
			for (String name : names(spec)) {
				String previous = claimedBy.putIfAbsent(name.toLowerCase(Locale.ROOT), key);
				if (previous != null && !previous.equals(key)) {
					throw new InvalidQuotaPropertyException(modelPrefix + "aliases", name,
							"model id '" + name + "' already belongs to models." + previous
									+ " (a call's model is matched in any case)",
							"give each model id to one entry only; entries that share a pool list each other's ids as aliases.");
				}
			}
			if (spec.accounting().cost() == null && account.hasBudget()) {
				logger.warn("llm-quota: " + modelPrefix.substring(0, modelPrefix.length() - 1)
						+ " has no price, so its calls spend nothing of the entry's budget: set its"
						+ " cost.input-per-million and cost.output-per-million");
			}
			models.put(spec.model(), spec);
		}
		PoolSpec unlisted = new PoolSpec("unlisted", Set.of(), Limits.none(), accounting(provider, dialect, 1),
				provider.getBurstWindow(), Duration.ofSeconds(2), 4096, Priority.INTERACTIVE, defaultTokenizer(dialect),
				provider.getMode());
		if (account.hasBudget() && models.values().stream().noneMatch(PoolSpec::priced)
				&& (template == null || !template.priced())) {
			String budget = (provider.getBudget().getPerDay() != null) ? "per-day" : "per-month";
			throw new InvalidQuotaPropertyException(prefix + "budget." + budget,
					(provider.getBudget().getPerDay() != null) ? provider.getBudget().getPerDay()
							: provider.getBudget().getPerMonth(),
					"no model of this entry has a price above 0, so its calls spend nothing and the budget can never trip",
					"set cost.input-per-million and cost.output-per-million on the entry's models (or on models.default),"
							+ " or remove the budget.");
		}
		Optional<ProviderSpec.MatchHeader> matchHeader = matchHeader(prefix + "match-header.",
				provider.getMatchHeader());
		if (provider.getRegion() != null && provider.getRegion().isBlank()) {
			// a placeholder with nothing set, say: the pools' label would be empty
			throw new InvalidQuotaPropertyException(prefix + "region", provider.getRegion(),
					"a region label cannot be empty",
					"set the entry's region, for example eastus, or remove the property (the label is then default).");
		}
		String region = (provider.getRegion() != null) ? provider.getRegion() : "default";
		return new ProviderSpec(id, baseUrl, dialect.id(), region, zone, account, provider.getBurstWindow(),
				provider.isInFlightGate(), models, Optional.ofNullable(template), unlisted, matchHeader,
				provider.isAddStreamUsage(), chargeRefused(provider.getChargeRefused(), dialect),
				provider.getBudget().getWarnAt());
	}

	/** Whether a model's calls spend anything of a budget. */
	private static Set<String> names(PoolSpec spec) {
		Set<String> names = new LinkedHashSet<>();
		names.add(spec.model());
		names.addAll(spec.aliases());
		return names;
	}

	private static PoolSpec pool(String prefix, String key, LlmQuotaProperties.Model model,
			LlmQuotaProperties.Provider provider, DialectId dialect) {
		Limits limits = limits(prefix, model);
		positive(prefix + "expected-latency", model.getExpectedLatency(), "for example 2s (the default)");
		Duration burstWindow = (model.getBurstWindow() != null) ? model.getBurstWindow() : provider.getBurstWindow();
		burstWindow(prefix + "burst-window", burstWindow);
		if (model.getDefaultMaxTokens() < 1) {
			throw new InvalidQuotaPropertyException(prefix + "default-max-tokens", model.getDefaultMaxTokens(),
					"a call that names no output ceiling would reserve no output, though the provider counts what it"
							+ " generates (calls to embeddings endpoints reserve none whatever it says)",
					"set the ceiling used when a call names none, the model's output limit, for example 4096.");
		}
		if (model.getOutputBurndown() < 1) {
			throw new InvalidQuotaPropertyException(prefix + "output-burndown", model.getOutputBurndown(),
					"each output token counts at least once",
					"set 1 (the default), or the provider's factor such as 5.");
		}
		for (int i = 0; i < model.getAliases().size(); i++) {
			String alias = model.getAliases().get(i);
			if (alias == null || alias.isBlank()) {
				throw new InvalidQuotaPropertyException(prefix + "aliases[" + i + "]", alias, "an alias is empty",
						"list the model ids calls send, for example gpt-4o-2024-08-06, or remove the empty one.");
			}
		}
		String name = (model.getName() != null && !model.getName().isBlank()) ? model.getName() : key;
		String tokenizer = (model.getTokenizer() != null) ? model.getTokenizer() : defaultTokenizer(dialect);
		try {
			TokenEstimator.of(tokenizer);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidQuotaPropertyException(prefix + "tokenizer", tokenizer, ex.getMessage(),
					"use o200k_base (GPT-4o and later), cl100k_base (GPT-4, GPT-3.5) or chars:N, N characters per token (e.g. chars:4).");
		}
		return new PoolSpec(name, Set.copyOf(model.getAliases()), limits,
				accounting(provider, dialect, model.getOutputBurndown(),
						cost(prefix + "cost.", model.getCost(), cacheWriteFactor(dialect, name, model.getAliases()))),
				burstWindow, model.getExpectedLatency(), model.getDefaultMaxTokens(), model.getPriority(), tokenizer,
				(model.getMode() != null) ? model.getMode() : provider.getMode());
	}

	private static boolean chargeRefused(LlmQuotaProperties.ChargeRefused value, DialectId dialect) {
		if (value == null) {
			// only OpenAI documents that refused requests count against the per-minute
			// limit; the others document nothing, and the simulator agrees
			return dialect == DialectId.OPENAI;
		}
		return value == LlmQuotaProperties.ChargeRefused.REQUESTS;
	}

	private static String defaultTokenizer(DialectId dialect) {
		return (dialect == DialectId.OPENAI || dialect == DialectId.AZURE_OPENAI) ? "o200k_base" : "chars:4";
	}

	private static Optional<ProviderSpec.MatchHeader> matchHeader(String prefix,
			LlmQuotaProperties.MatchHeader header) {
		if (header == null || (header.getName() == null && header.getValue() == null)) {
			return Optional.empty();
		}
		if (header.getName() == null || header.getName().isBlank()) {
			throw new InvalidQuotaPropertyException(prefix + "name", header.getName(), "a header name is needed",
					"set the header that tells the accounts apart, for example OpenAI-Project.");
		}
		if (!EntryCredentials.isHeaderName(header.getName().trim())) {
			// a name no request can carry: the entry would govern nothing, in silence
			throw new InvalidQuotaPropertyException(prefix + "name", header.getName(),
					"it is not an HTTP header name, so no call ever matches it",
					"set the header's name alone, for example OpenAI-Project.");
		}
		if (header.getValue() == null) {
			throw new InvalidQuotaPropertyException(prefix + "value", null, "a header value is needed",
					"set the value this entry's calls carry in " + header.getName() + ".");
		}
		return Optional.of(new ProviderSpec.MatchHeader(header.getName().trim(), header.getValue()));
	}

	private static Accounting accounting(LlmQuotaProperties.Provider provider, DialectId dialect, int burndown) {
		return accounting(provider, dialect, burndown, null);
	}

	private static Accounting accounting(LlmQuotaProperties.Provider provider, DialectId dialect, int burndown,
			Cost cost) {
		boolean reserve = (provider.getReserveMaxTokens() != null) ? provider.getReserveMaxTokens()
				: dialect.reserveMaxTokensByDefault();
		boolean cached = (provider.getCachedInputCounts() != null) ? provider.getCachedInputCounts()
				: dialect.cachedInputCountsByDefault();
		return new Accounting(reserve, provider.isRefundUnusedOutput(), cached, burndown, cost);
	}

	/** The entry's money budgets, in millionths, as account dimensions. */
	private static Limits budgets(String prefix, LlmQuotaProperties.Budget budget, Limits account) {
		Limits limits = account;
		if (budget.getPerDay() != null) {
			limits = limits.with(Dimension.BUDGET_PER_DAY, micros(prefix + "per-day", budget.getPerDay()));
		}
		if (budget.getPerMonth() != null) {
			limits = limits.with(Dimension.BUDGET_PER_MONTH, micros(prefix + "per-month", budget.getPerMonth()));
		}
		if (!(budget.getWarnAt() > 0 && budget.getWarnAt() <= 1)) {
			throw new InvalidQuotaPropertyException(prefix + "warn-at", budget.getWarnAt(),
					"the share must be above 0 and at most 1", "set the share spent that warns, for example 0.8.");
		}
		return limits;
	}

	private static long micros(String property, double money) {
		// budgets count millionths: one that rounds to none is no budget
		if (!(money > 0) || money > 9e12 || Math.round(money * 1_000_000) == 0) {
			throw new InvalidQuotaPropertyException(property, money,
					"a budget must be a positive amount, at least a millionth of the currency",
					"set the most the calls may cost in the account's currency, for example 50.00.");
		}
		return Math.round(money * 1_000_000);
	}

	/** The highest cache-write factor a model's id or any of its aliases calls for. */
	private static double cacheWriteFactor(DialectId dialect, String name, List<String> aliases) {
		double factor = dialect.cacheWritePriceFactorByDefault(name);
		for (String alias : aliases) {
			factor = Math.max(factor, dialect.cacheWritePriceFactorByDefault(alias));
		}
		return factor;
	}

	private static Cost cost(String prefix, LlmQuotaProperties.Cost cost, double cacheWriteFactor) {
		Double input = alias(prefix, "input-per-million", cost.getInputPerMillion(), "input", cost.getInput());
		Double output = alias(prefix, "output-per-million", cost.getOutputPerMillion(), "output", cost.getOutput());
		Double cachedInput = alias(prefix, "cached-input-per-million", cost.getCachedInputPerMillion(), "cached-input",
				cost.getCachedInput());
		if (input == null && output == null && cachedInput == null && cost.getCacheWriteInputPerMillion() == null) {
			return null;
		}
		double inputPrice = price(prefix + "input-per-million", input);
		double outputPrice = price(prefix + "output-per-million", output);
		double cached = (cachedInput != null) ? price(prefix + "cached-input-per-million", cachedInput) : inputPrice;
		double written = (cost.getCacheWriteInputPerMillion() != null)
				? price(prefix + "cache-write-input-per-million", cost.getCacheWriteInputPerMillion())
				: inputPrice * cacheWriteFactor;
		return new Cost(inputPrice, outputPrice, cached, written);
	}

	/** A price set under its contract name or its short alias, not both differently. */
	private static Double alias(String prefix, String name, Double value, String alias, Double aliasValue) {
		if (value != null && aliasValue != null && !value.equals(aliasValue)) {
			throw new InvalidQuotaPropertyException(prefix + alias, aliasValue,
					"it is the short name of " + prefix + name + ", which is set to " + value,
					"set the price once, as " + name + ".");
		}
		return (value != null) ? value : aliasValue;
	}

	private static double price(String property, Double price) {
		// an infinite price makes every call's cost infinite: no budget pays for one
		if (price == null || price < 0 || !Double.isFinite(price)) {
			throw new InvalidQuotaPropertyException(property, price, "a price per million tokens is needed",
					"set both input-per-million and output-per-million, for example 2.50 and 10.00.");
		}
		return price;
	}

	private static Limits limits(String prefix, LlmQuotaProperties.Limits limits) {
		Map<Dimension, Long> values = new EnumMap<>(Dimension.class);
		put(values, prefix, Dimension.REQUESTS_PER_MINUTE, limits.getRequestsPerMinute());
		put(values, prefix, Dimension.TOKENS_PER_MINUTE, limits.getTokensPerMinute());
		put(values, prefix, Dimension.INPUT_TOKENS_PER_MINUTE, limits.getInputTokensPerMinute());
		put(values, prefix, Dimension.OUTPUT_TOKENS_PER_MINUTE, limits.getOutputTokensPerMinute());
		put(values, prefix, Dimension.CONCURRENT_REQUESTS, limits.getConcurrentRequests());
		put(values, prefix, Dimension.REQUESTS_PER_DAY, limits.getRequestsPerDay());
		put(values, prefix, Dimension.TOKENS_PER_DAY, limits.getTokensPerDay());
		return Limits.of(values);
	}

	private static void put(Map<Dimension, Long> values, String prefix, Dimension dimension, Long limit) {
		if (limit == null) {
			return;
		}
		if (limit < 1) {
			throw new InvalidQuotaPropertyException(prefix + dimension.id(), limit, "a limit must be positive",
					"set the limit the provider publishes for " + dimension.id()
							+ ", or remove the property to leave the dimension unlimited here.");
		}
		values.put(dimension, limit);
	}

	/**
	 * The entry's base URL: as configured, or the public one of a dialect with one public
	 * host (openai, anthropic, gemini).
	 */
	private static URI baseUrl(String prefix, String value, DialectId dialect) {
		String property = prefix + "base-url";
		String fix = "set the absolute http(s) URL calls to this provider start with, for example https://api.openai.com.";
		if (value == null || value.isBlank()) {
			String known = (dialect != null) ? DialectInference.publicBaseUrl(dialect) : null;
			if (known != null) {
				return URI.create(known);
			}
			String reason = (dialect != null) ? "the " + dialect.id() + " dialect has no single public URL"
					: "neither base-url nor dialect is set";
			String example = (dialect == DialectId.AZURE_OPENAI) ? "https://<resource>.openai.azure.com"
					: (dialect == DialectId.BEDROCK) ? "https://bedrock-runtime.<region>.amazonaws.com"
							: (dialect == DialectId.OLLAMA) ? "http://localhost:11434" : "https://api.openai.com";
			throw new InvalidQuotaPropertyException(property, value, reason,
					"set the absolute http(s) URL calls to this provider start with, for example " + example
							+ ((dialect == null) ? ", or set " + prefix + "dialect to openai, anthropic or gemini"
									+ " to use that provider's public URL." : "."));
		}
		try {
			URI uri = new URI(value.trim());
			String scheme = (uri.getScheme() != null) ? uri.getScheme().toLowerCase(Locale.ROOT) : "";
			if (!(scheme.equals("http") || scheme.equals("https")) || uri.getHost() == null) {
				throw new InvalidQuotaPropertyException(property, value, "not an absolute http(s) URL with a host",
						fix);
			}
			return uri;
		}
		catch (URISyntaxException ex) {
			throw new InvalidQuotaPropertyException(property, value, "malformed URL (" + ex.getReason() + ")", fix);
		}
	}

	/**
	 * The entry's dialect: as configured, if its URL agrees; else what the URL decides;
	 * else openai, with one warning.
	 */
	private static DialectId dialect(String prefix, URI baseUrl, DialectId configured) {
		DialectInference inferred = DialectInference.of(baseUrl);
		if (configured != null) {
			if (!inferred.allows(configured)) {
				throw new InvalidQuotaPropertyException(prefix + "dialect", configured.id(),
						baseUrl + " serves the " + inferred.dialect().id() + " dialect, not " + configured.id(),
						"remove " + prefix + "dialect (it is inferred from base-url) or set it to "
								+ inferred.dialect().id() + "; for an OpenAI-compatible endpoint of that provider,"
								+ " point base-url at its OpenAI-compatible path.");
			}
			return configured;
		}
		if (inferred.dialect() != null) {
			return inferred.dialect();
		}
		logger.warn("llm-quota: provider entry " + prefix.substring(0, prefix.length() - 1) + " sets no dialect and its"
				+ " base-url " + baseUrl + " does not tell which provider it is; its calls are read as openai. Set "
				+ prefix + "dialect (openai, azure-openai, anthropic, bedrock, gemini or ollama).");
		return DialectId.OPENAI;
	}

	static void positive(String property, Duration value, String example) {
		if (value == null || value.isNegative() || value.isZero()) {
			throw new InvalidQuotaPropertyException(property, value, "the duration must be positive",
					"set a positive duration, " + example + ".");
		}
	}

	/**
	 * A rate bucket holds its per-minute limit over this window: a window past a minute
	 * lets more than a minute's limit through at once, which a provider that meters per
	 * minute refuses.
	 */
	private static void burstWindow(String property, Duration value) {
		positive(property, value, "for example 2s (the default)");
		if (value.compareTo(Duration.ofMinutes(1)) > 0) {
			throw new InvalidQuotaPropertyException(property, value,
					"a window longer than a minute lets more than a minute's limit through at once",
					"set at most 1m: the provider's own window (OpenAI's is about 10s, Azure's 1 to 10s), or 2s (the"
							+ " default).");
		}
	}

	static void positiveOrZero(String property, Duration value, String example) {
		if (value == null || value.isNegative()) {
			throw new InvalidQuotaPropertyException(property, value, "the duration must not be negative",
					"set 0s or a positive duration, " + example + ".");
		}
	}

}
