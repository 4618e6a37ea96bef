package dev.llmquota.client;

import java.time.Duration;
import java.util.List;

/**
 * A route's settings ({@code llm.quota.routes.<name>}): one logical model over several
 * provider entries.
 *
 * @param name the route's name, the last segment of its base URL
 * @param targets where its calls may go, in the order that breaks ties
 * @param spillAfter how long a primary may make a call wait before spill-over targets are
 * considered
 */
public record RouteSpec(String name, List<Target> targets, Duration spillAfter) {

	public RouteSpec {
		targets = List.copyOf(targets);
	}

	/**
	 * One place a route's calls may go.
	 *
	 * @param provider the provider entry's id
	 * @param model the model there (an Azure deployment name, a model id)
	 * @param spillOver whether it is used only when no primary admits the call within
	 * {@code spill-after}
	 * @param apiVersion Azure's api-version, for a call that names none
	 */
	public record Target(String provider, String model, boolean spillOver, String apiVersion) {

	}

}
