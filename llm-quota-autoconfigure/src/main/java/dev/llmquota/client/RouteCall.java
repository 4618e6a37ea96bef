package dev.llmquota.client;

import java.net.URI;
import java.time.Duration;
import java.util.function.Function;

import dev.llmquota.BudgetExhaustedException;
import dev.llmquota.LlmQuota;
import dev.llmquota.QuotaExhaustedException;
import dev.llmquota.QuotaWaitTimeoutException;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.core.QuotaPermit;
import dev.llmquota.provider.ParsedRequest;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * One call addressed to a {@link Route}: the request read once, and its plan for each
 * target the route weighs (the target's URL, the model in the body, its pool and demand),
 * made when first weighed. Each attempt chooses its target at admission; the attempt then
 * follows the target's plan.
 */
final class RouteCall {

	private static final JsonMapper mapper = JsonMapper.shared();

	private final Route route;

	private final Planner planner;

	private final ParsedRequest request;

	private final byte[] body;

	/** The whole request as a tree, parsed once for the targets whose model differs. */
	private ObjectNode whole;

	private final URI uri;

	private final Function<String, Object> attributes;

	private final CallPlan[] plans;

	/** The target of the attempt admitted last. */
	private volatile Route.Target current;

	/**
	 * The targets that told this call their quota is spent: never chosen for it again.
	 */
	private final boolean[] spent;

	/** Makes one target's plan from its request, as any call's. */
	interface Planner {

		CallPlan plan(ProviderEntry entry, ParsedRequest request, URI uri, byte[] body,
				Function<String, Object> attributes);

	}

	RouteCall(Route route, Planner planner, ParsedRequest request, byte[] body, URI uri,
			Function<String, Object> attributes) {
		this.route = route;
		this.planner = planner;
		this.request = request;
		this.body = body;
		this.uri = uri;
		// the target names the model, not the caller
		this.attributes = (name) -> LlmQuota.MODEL.equals(name) ? null : attributes.apply(name);
		this.plans = new CallPlan[route.targets().size()];
		this.spent = new boolean[route.targets().size()];
	}

	Route route() {
		return this.route;
	}

	/** The call's plan on a target; the request is rewritten for it once. */
	synchronized CallPlan planFor(Route.Target target) {
		int index = this.route.targets().indexOf(target);
		CallPlan plan = this.plans[index];
		if (plan == null) {
			ParsedRequest request = this.request;
			byte[] body = this.body;
			JsonNode named = (request != null) ? request.fields().get("model") : null;
			boolean same = named != null && named.isString() && target.model().equals(named.asString());
			if (request != null && !same) {
				// re-encoded only when the model changes, from the whole request
				if (this.whole == null) {
					this.whole = (ObjectNode) mapper.readTree(this.body);
				}
				this.whole.put("model", target.model());
				body = mapper.writeValueAsBytes(this.whole);
				request = request.withModel(target.model());
			}
			plan = this.planner.plan(target.entry(), request, this.route.uriFor(target, this.uri), body,
					this.attributes);
			plan = plan.on(this);
			this.plans[index] = plan;
		}
		return plan;
	}

	/**
	 * How long past its estimate a call waits at its target before it leaves and is
	 * chosen again: a shared store's answer, or calls outside the route, may keep the
	 * target longer than this replica's view said.
	 */
	static final long MOVE_ON_NANOS = 1_000_000_000L;

	/**
	 * Chooses an attempt's target and waits for its admission there, within what is left
	 * of the call's {@code max-wait}; a call the target does not admit within its
	 * estimate and {@link #MOVE_ON_NANOS} more leaves it for the target then earliest.
	 */
	Mono<QuotaPermit> admit(QuotaEngine engine, long deadline) {
		return admit(engine, deadline, null);
	}

	/**
	 * As {@link #admit(QuotaEngine, long)}, after a target's books said its quota or a
	 * budget is spent ({@code spentThere}): when no other target can admit the call
	 * either, that is what the caller gets.
	 */
	private Mono<QuotaPermit> admit(QuotaEngine engine, long deadline, RuntimeException spentThere) {
		return Mono.defer(() -> {
			long left = Math.max(0, deadline - engine.clock().nanoTime());
			Route.Choice choice;
			try {
				choice = this.route.choose(this, left);
				// a shared store admits nothing at once: its bookings go through
				// the store thread
				boolean here = !engine.store().shared();
				for (int tries = 1; here && choice.target() != null && choice.waitNanos() == 0; tries++) {
					CallPlan plan = planFor(choice.target());
					QuotaPermit now = engine.tryAcquire(plan.pool(), plan.demand(), plan.priority());
					if (now != null) {
						took(choice, now);
						return LlmQuotaCalls.granted(now);
					}
					if (tries > this.route.targets().size()) {
						break;
					}
					// another call took the room first: choose again, from the
					// books as they are
					notTaken(choice);
					choice = this.route.choose(this, left);
				}
			}
			catch (QuotaWaitTimeoutException ex) {
				// no target can take it: a target found spent says why
				if (spentThere != null) {
					return Mono.error(spentThere);
				}
				throw ex;
			}
			if (choice.target() == null) {
				return Mono.delay(Duration.ofNanos(choice.lookAgainNanos())).then(admit(engine, deadline, spentThere));
			}
			Route.Choice chosen = choice;
			CallPlan plan = planFor(chosen.target());
			long patience = (chosen.waitNanos() > Long.MAX_VALUE - MOVE_ON_NANOS) ? Long.MAX_VALUE
					: chosen.waitNanos() + MOVE_ON_NANOS;
			boolean mayMove = patience < left && this.route.targets().size() > 1;
			return engine
				.acquire(plan.pool(), plan.demand(), plan.priority(), Duration.ofNanos(mayMove ? patience : left))
				.doOnNext((permit) -> took(chosen, permit))
				.doOnError((ex) -> notTaken(chosen))
				.doOnCancel(() -> notTaken(chosen))
				// one handler, for this target's answer alone: what a later choice fails
				// with passes through
				.onErrorResume((ex) -> {
					boolean timeLeft = engine.clock().nanoTime() < deadline;
					if (ex instanceof QuotaWaitTimeoutException && mayMove && timeLeft) {
						return admit(engine, deadline, spentThere);
					}
					if (spent(ex) && this.route.targets().size() > 1 && timeLeft) {
						// found spent while it waited there (another call's answer, a
						// daily cap): it moves on, as a spent answer to it would have
						markSpent(chosen.target());
						return admit(engine, deadline, (RuntimeException) ex);
					}
					return Mono.error(ex);
				});
		});
	}

	private static boolean spent(Throwable failure) {
		return failure instanceof QuotaExhaustedException || failure instanceof BudgetExhaustedException;
	}

	private synchronized void markSpent(Route.Target target) {
		this.spent[this.route.targets().indexOf(target)] = true;
	}

	private void took(Route.Choice choice, QuotaPermit permit) {
		this.current = choice.target();
		choice.target().took(permit, choice.probe());
	}

	/** A choice not admitted gives back the probe it held, and only its own. */
	private static void notTaken(Route.Choice choice) {
		if (choice.probe()) {
			choice.target().probeNotTaken();
		}
	}

	/** The provider refused the attempt just admitted: rate-limited, or a quota spent. */
	void refused(boolean spent) {
		Route.Target target = this.current;
		if (target != null) {
			target.refused(spent);
			if (spent) {
				markSpent(target);
			}
		}
	}

	/** Whether every target told this call its quota is spent. */
	synchronized boolean allSaidSpent() {
		for (boolean said : this.spent) {
			if (!said) {
				return false;
			}
		}
		return true;
	}

	/** Whether a target told this call its quota is spent. */
	synchronized boolean saidSpent(Route.Target target) {
		return this.spent[this.route.targets().indexOf(target)];
	}

	/** The plan of the attempt just admitted. */
	CallPlan admitted() {
		return planFor(this.current);
	}

}
