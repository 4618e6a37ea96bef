package dev.llmquota.client;

import java.net.URI;
import java.time.Duration;

import dev.llmquota.core.Demand;
import dev.llmquota.core.Mode;
import dev.llmquota.core.Pool;
import dev.llmquota.core.Priority;
import dev.llmquota.provider.Dialect;
import dev.llmquota.provider.Framing;
import dev.llmquota.tokens.TokenEstimator;

/**
 * What llm-quota read from one call before sending it.
 *
 * @param entry the provider entry
 * @param dialect the dialect the call speaks: its entry's, at the call's path
 * @param pool the pool the call is accounted to
 * @param demand what it reserves: corrected input estimate and output ceiling
 * @param rawEstimate the input estimate before drift correction, compared with usage; 0
 * where part of the input is stored at the provider (nothing to compare)
 * @param estimator the pool's input estimator
 * @param generates whether the endpoint generates output (not embeddings or moderations):
 * a call that does not reserves no output
 * @param streaming whether the answer is streamed
 * @param refusesInStream whether the stream may refuse the call after a 200 (OpenAI's
 * Responses API): it is held back from the caller until its first telling event
 * @param framing how the answer is framed
 * @param body the bytes to send: the caller's, unless a usage request was added
 * @param priority the call's class, or {@code null} for the model's default
 * @param maxWait the call's longest wait, or {@code null} for the configured one
 * @param uri where the call is sent: the caller's URL, or a route's target's
 * @param route the route call it is an attempt of, or {@code null}
 */
public record CallPlan(ProviderEntry entry, Dialect dialect, Pool pool, Demand demand, long rawEstimate,
		TokenEstimator estimator, boolean generates, boolean streaming, boolean refusesInStream, Framing framing,
		byte[] body, Priority priority, Duration maxWait, URI uri, RouteCall route) {

	/** The same plan, as an attempt of a route call. */
	CallPlan on(RouteCall call) {
		return new CallPlan(this.entry, this.dialect, this.pool, this.demand, this.rawEstimate, this.estimator,
				this.generates, this.streaming, this.refusesInStream, this.framing, this.body, this.priority,
				this.maxWait, this.uri, call);
	}

	/**
	 * Returns whether the call addresses a route: each attempt then goes to the target
	 * chosen at its admission ({@link GovernedCall#plan()} tells its URL, body and
	 * credentials).
	 * @return whether it does
	 */
	public boolean routed() {
		return this.route != null;
	}

	/**
	 * Returns whether an answer llm-quota passes on as the provider sent it, once its
	 * attempts are spent, is one a client's own retry would retry (throttling, server
	 * errors): an adapter whose client retries those hands it a failure it does not
	 * retry, or each of its retries would run llm-quota's attempts again.
	 * @param status the answer's status
	 * @return whether it is
	 */
	public boolean retriedByClient(int status) {
		return enforced() && (status == 429 || status >= 500);
	}

	/**
	 * Returns whether llm-quota decides the call's refusals (retries, fails, hands them
	 * on marked not to be retried again): its pool enforces. In shadow mode a refusal
	 * reaches the caller as it came, for the client's own retry, if any.
	 * @return whether it decides
	 */
	public boolean enforced() {
		return this.pool.spec().mode() == Mode.ENFORCE;
	}

	/**
	 * Returns how often one attempt may move off a target that says its quota is spent:
	 * to each other target of its route once (a target that said so is not chosen for the
	 * call again, even when a reset of now leaves it unmarked); never off a route.
	 * @return the most moves
	 */
	public int moves() {
		return (this.route != null) ? this.route.route().targets().size() - 1 : 0;
	}

	/**
	 * Returns whether the call may move to another target of its route: not once every
	 * target has told it its quota is spent, over all its attempts.
	 * @return whether a target is left
	 */
	public boolean mayMove() {
		return this.route != null && !this.route.allSaidSpent();
	}

	/**
	 * Returns the name of the call's retry: its provider entry's, or its route's.
	 * @return the name
	 */
	public String retryName() {
		return (this.route != null) ? "route:" + this.route.route().name() : this.pool.provider();
	}

}
