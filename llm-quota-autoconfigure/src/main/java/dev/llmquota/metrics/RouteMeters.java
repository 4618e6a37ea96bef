package dev.llmquota.metrics;

import java.util.List;

import dev.llmquota.client.Route;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Meters of routes, tagged {@code route} and {@code target} ({@code <entry>/<model>}),
 * with the target's {@code provider} and {@code model}: {@code llm.quota.route.calls},
 * the attempts each target took, {@code llm.quota.route.refused}, those the provider
 * refused (tagged {@code reason}: {@code rate-limited} or {@code quota-spent}), and
 * {@code llm.quota.route.probed}, 1 while a target takes one call at a time for want of a
 * known rate limit. The target's pool meters tell the rest (its limits, waits,
 * throttling), tagged by its entry and model.
 */
public final class RouteMeters implements MeterBinder {

	static final String CALLS = "llm.quota.route.calls";

	static final String REFUSED = "llm.quota.route.refused";

	static final String PROBED = "llm.quota.route.probed";

	private final List<Route> routes;

	/**
	 * Creates the binder.
	 * @param routes the routes
	 */
	public RouteMeters(List<Route> routes) {
		this.routes = routes;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		for (Route route : this.routes) {
			for (Route.Target target : route.targets()) {
				Tags tags = Tags.of("route", route.name(), "target", target.toString(), "provider",
						target.entry().provider().id(), "model", target.model());
				FunctionCounter.builder(CALLS, target, Route.Target::taken)
					.description("Attempts of a route's calls sent to the target")
					.tags(tags)
					.register(registry);
				FunctionCounter.builder(REFUSED, target, Route.Target::rateLimited)
					.description("Attempts of a route's calls the provider refused at the target")
					.tags(tags.and("reason", "rate-limited"))
					.register(registry);
				FunctionCounter.builder(REFUSED, target, Route.Target::exhausted)
					.description("Attempts of a route's calls the provider refused at the target")
					.tags(tags.and("reason", "quota-spent"))
					.register(registry);
				Gauge.builder(PROBED, target, (t) -> t.probed() ? 1 : 0)
					.description("1 while the target takes one call at a time, having no known rate limit")
					.tags(tags)
					.register(registry);
			}
		}
	}

}
