package dev.llmquota.client;

import java.time.Duration;

/**
 * What to do with one attempt's answer: hand it to the caller, try again after a wait, or
 * fail the call.
 *
 * @param action the action
 * @param delay the wait before the next attempt, for {@link Action#RETRY}
 * @param failure the exception to fail the call with, for {@link Action#FAIL}, or once no
 * move is left, for a retry that is not counted
 * @param counted whether a retry counts as an attempt
 * ({@code llm.quota.retry.max-attempts}): not when a route moves a call off a target
 * whose quota is spent
 */
public record Outcome(Action action, Duration delay, RuntimeException failure, boolean counted) {

	/**
	 * An outcome whose retry, if any, counts as an attempt.
	 * @param action the action
	 * @param delay the wait before the next attempt
	 * @param failure the exception to fail the call with
	 */
	public Outcome(Action action, Duration delay, RuntimeException failure) {
		this(action, delay, failure, true);
	}

	/**
	 * What to do.
	 */
	public enum Action {

		/** Hand the answer to the caller as the provider sent it. */
		PASS,

		/** Try again, through admission, after the wait. */
		RETRY,

		/** Fail the call with the exception. */
		FAIL

	}

	static Outcome pass() {
		return new Outcome(Action.PASS, null, null);
	}

	static Outcome retry(Duration wait) {
		return new Outcome(Action.RETRY, wait, null);
	}

	/**
	 * A route's target said its quota is spent: the call moves to another target at once,
	 * and that is not counted as an attempt; once every target of its route has said so,
	 * it fails with what a call off a route would have.
	 * @param failure the contract exception to fail with when no move is left
	 */
	static Outcome moveOn(RuntimeException failure) {
		return new Outcome(Action.RETRY, Duration.ZERO, failure, false);
	}

	static Outcome fail(RuntimeException failure) {
		return new Outcome(Action.FAIL, null, failure);
	}

}
