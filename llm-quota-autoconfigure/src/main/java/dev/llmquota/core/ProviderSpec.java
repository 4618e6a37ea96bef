package dev.llmquota.core;

import java.net.URI;
import java.time.Duration;
import java.time.ZoneId;
import java.util.Map;
import java.util.Optional;

/**
 * Immutable settings of one provider entry: one account (or subscription) in one region.
 *
 * @param id the entry's id, free text chosen by the user
 * @param baseUrl calls whose URL starts with this are governed
 * @param dialect the provider's wire dialect id
 * @param region a label; every limit of the entry is scoped to it
 * @param dayZone the zone of calendar days for per-day limits
 * @param account the ceilings shared by all models of the entry
 * @param accountBurstWindow the account buckets' capacity in time
 * @param inFlightGate whether the Little's-law in-flight bounds are enforced
 * @param models the configured pools by model id
 * @param template the pool settings of unlisted models, if any
 * @param unlisted the pool settings of unlisted models without a template: no model
 * limits
 * @param matchHeader a header a call must carry to belong to this entry, when several
 * accounts share one URL
 * @param addStreamUsage whether OpenAI-style streaming calls are asked for a final usage
 * chunk when they do not ask themselves
 * @param chargeRefusedRequests whether a refused attempt keeps its request charged (the
 * provider counts refused requests against its per-minute limit)
 * @param budgetWarnAt the share of a money budget spent at which a warning is raised
 */
public record ProviderSpec(String id, URI baseUrl, String dialect, String region, ZoneId dayZone, Limits account,
		Duration accountBurstWindow, boolean inFlightGate, Map<String, PoolSpec> models, Optional<PoolSpec> template,
		PoolSpec unlisted, Optional<MatchHeader> matchHeader, boolean addStreamUsage, boolean chargeRefusedRequests,
		double budgetWarnAt) {

	public ProviderSpec {
		models = Map.copyOf(models);
	}

	/**
	 * An entry that warns at 80% of a budget.
	 * @param id the entry's id
	 * @param baseUrl the base URL
	 * @param dialect the dialect id
	 * @param region the region label
	 * @param dayZone the zone of calendar days
	 * @param account the account's ceilings
	 * @param accountBurstWindow the account buckets' capacity in time
	 * @param inFlightGate whether in-flight bounds are enforced
	 * @param models the configured pools
	 * @param template the template of unlisted models
	 * @param unlisted the settings of unlisted models without a template
	 * @param matchHeader the header calls must carry
	 * @param addStreamUsage whether streams are asked for usage
	 * @param chargeRefusedRequests whether refused attempts keep their request charged
	 */
	public ProviderSpec(String id, URI baseUrl, String dialect, String region, ZoneId dayZone, Limits account,
			Duration accountBurstWindow, boolean inFlightGate, Map<String, PoolSpec> models,
			Optional<PoolSpec> template, PoolSpec unlisted, Optional<MatchHeader> matchHeader, boolean addStreamUsage,
			boolean chargeRefusedRequests) {
		this(id, baseUrl, dialect, region, dayZone, account, accountBurstWindow, inFlightGate, models, template,
				unlisted, matchHeader, addStreamUsage, chargeRefusedRequests, 0.8);
	}

	/**
	 * Whether a call of this entry can spend a money budget: a model, or the template of
	 * unlisted ones, has a price above 0. A budget otherwise never trips.
	 * @return whether any of its models is priced
	 */
	public boolean priced() {
		return this.models.values().stream().anyMatch(PoolSpec::priced)
				|| this.template.map(PoolSpec::priced).orElse(false);
	}

	/**
	 * A header name and value that select a provider entry.
	 *
	 * @param name the header name, any case
	 * @param value the exact value
	 */
	public record MatchHeader(String name, String value) {

	}

}
