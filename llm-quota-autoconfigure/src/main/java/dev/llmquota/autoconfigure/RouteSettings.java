package dev.llmquota.autoconfigure;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import dev.llmquota.client.RouteSpec;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.Limits;
import dev.llmquota.core.ProviderSpec;
import dev.llmquota.core.QuotaConfig;
import dev.llmquota.provider.DialectId;

/**
 * Reads {@code llm.quota.routes.*} into route settings, refusing at start-up a route
 * llm-quota cannot serve: no targets, an unknown entry, a target twice, or targets of
 * wire formats a route cannot mix or rewrite.
 */
final class RouteSettings {

	/** A route's name: one path segment of its URL. */
	private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._~-]+");

	/** An Azure api-version: 2024-10-21, 2025-04-01-preview, preview. */
	private static final Pattern API_VERSION = Pattern.compile("[A-Za-z0-9._-]+");

	private RouteSettings() {
	}

	static List<RouteSpec> of(LlmQuotaProperties properties, QuotaConfig config) {
		List<RouteSpec> routes = new ArrayList<>();
		properties.getRoutes()
			.forEach((name, route) -> routes.add(route(name, route, config.providers(), properties.getProviders())));
		return routes;
	}

	private static RouteSpec route(String name, LlmQuotaProperties.Route route, Map<String, ProviderSpec> providers,
			Map<String, LlmQuotaProperties.Provider> configured) {
		String prefix = QuotaConfigFactory.PREFIX + "routes." + name + ".";
		if (!NAME.matcher(name).matches()) {
			throw new InvalidQuotaPropertyException(QuotaConfigFactory.PREFIX + "routes." + name, name,
					"a route's name is the last segment of its URL", "use letters, digits, '-', '_', '.' or '~'.");
		}
		if (route.getTargets().isEmpty()) {
			throw new InvalidQuotaPropertyException(prefix + "targets", "[]", "a route needs at least one target",
					"list its targets, each with provider (an entry under llm.quota.providers) and model.");
		}
		QuotaConfigFactory.positiveOrZero(prefix + "spill-after", route.getSpillAfter(),
				"for example 2s; 0 (the default) spills whenever every primary would make the call wait");
		List<RouteSpec.Target> targets = new ArrayList<>();
		Set<String> seen = new HashSet<>();
		String family = null;
		boolean primary = false;
		for (int i = 0; i < route.getTargets().size(); i++) {
			LlmQuotaProperties.Target target = route.getTargets().get(i);
			String at = prefix + "targets[" + i + "].";
			ProviderSpec provider = (target.getProvider() != null) ? providers.get(target.getProvider()) : null;
			if (provider == null) {
				throw new InvalidQuotaPropertyException(at + "provider", target.getProvider(),
						"no provider entry has that id", "use one of " + providers.keySet() + ".");
			}
			if (target.getModel() == null || target.getModel().isBlank()) {
				throw new InvalidQuotaPropertyException(at + "model", target.getModel(), "a target needs its model",
						"set the model there: an Azure deployment name, or an OpenAI or Anthropic model id.");
			}
			String model = modelId(provider, configured.get(provider.id()), target);
			if (!seen.add(provider.id() + "/" + model)) {
				throw new InvalidQuotaPropertyException(at + "model", target.getModel(),
						"the route already has this target", "list each provider entry and model once.");
			}
			String wire = wireFormat(at + "provider", provider);
			if (DialectInference.sendsNoRateLimitHeaders(provider.baseUrl()) && !rateLimited(provider, model)) {
				throw new InvalidQuotaPropertyException(at + "provider", provider.id(),
						"its provider sends no rate-limit headers, so a route would never learn its limits",
						"configure the model's limits under llm.quota.providers." + provider.id() + ".models (or the"
								+ " entry's account), or leave it out of the route.");
			}
			if (family != null && !family.equals(wire)) {
				throw new InvalidQuotaPropertyException(at + "provider", provider.id(),
						"a route cannot mix wire formats: its targets so far speak " + family + ", this one " + wire,
						"put OpenAI-family entries (openai, azure-openai) and Anthropic entries in separate routes.");
			}
			family = wire;
			primary |= !target.isSpillOver();
			String apiVersion = target.getApiVersion();
			if (apiVersion != null && !API_VERSION.matcher(apiVersion).matches()) {
				// left empty (a placeholder's empty default), every routed call would
				// send an empty api-version, which Azure refuses
				throw new InvalidQuotaPropertyException(at + "api-version", apiVersion,
						"it is no api-version Azure reads (empty, or with characters a version never has)",
						"set the version the deployment serves, for example 2024-10-21, or remove the property to"
								+ " send the caller's own.");
			}
			targets.add(new RouteSpec.Target(provider.id(), model, target.isSpillOver(), apiVersion));
		}
		if (!primary) {
			throw new InvalidQuotaPropertyException(prefix + "targets", "spill-over only",
					"every target is a spill-over, so none is ever preferred",
					"mark the targets calls should go to first with spill-over: false.");
		}
		return new RouteSpec(name, targets, route.getSpillAfter());
	}

	/**
	 * The model id a target sends: as written, or, where it names the key its entry lists
	 * a model under and no model has that id, the model's id (its name).
	 */
	private static String modelId(ProviderSpec provider, LlmQuotaProperties.Provider configured,
			LlmQuotaProperties.Target target) {
		String model = target.getModel();
		boolean anId = provider.models()
			.values()
			.stream()
			.anyMatch((pool) -> pool.model().equals(model) || pool.aliases().contains(model));
		LlmQuotaProperties.Model listed = (configured != null) ? configured.getModels().get(model) : null;
		return (!anId && listed != null && listed.getName() != null && !listed.getName().isBlank()) ? listed.getName()
				: model;
	}

	/**
	 * Whether a rate limit is configured for the model, its entry's, or its template's.
	 */
	private static boolean rateLimited(ProviderSpec provider, String model) {
		List<Limits> limits = new ArrayList<>();
		limits.add(provider.account());
		provider.models()
			.values()
			.stream()
			.filter((pool) -> pool.model().equals(model) || pool.aliases().contains(model))
			.forEach((pool) -> limits.add(pool.limits()));
		provider.template().ifPresent((template) -> limits.add(template.limits()));
		return limits.stream()
			.flatMap((each) -> each.asMap().keySet().stream())
			.anyMatch((dimension) -> dimension.kind() == Dimension.Kind.RATE);
	}

	/** The wire format of a target's entry, or the reason it cannot be in a route. */
	private static String wireFormat(String property, ProviderSpec provider) {
		DialectId dialect = DialectId.valueOf(provider.dialect().toUpperCase(java.util.Locale.ROOT).replace('-', '_'));
		return switch (dialect) {
			case OPENAI, AZURE_OPENAI -> "the OpenAI format";
			case ANTHROPIC -> "Anthropic's format";
			case BEDROCK, GEMINI, OLLAMA -> throw new InvalidQuotaPropertyException(property, provider.id(),
					"routes do not take " + dialect.id() + " entries yet: " + switch (dialect) {
						case OLLAMA -> "Ollama's native API is a wire format of its own";
						case GEMINI -> "Gemini's API is a wire format of its own, and Vertex authenticates"
								+ " with OAuth tokens of its own";
						default -> "Bedrock signs each request (SigV4) over the URL and body a route rewrites";
					}, "route OpenAI-family (openai, azure-openai, OpenAI-compatible) or Anthropic entries; call this"
							+ " entry directly.");
		};
	}

}
