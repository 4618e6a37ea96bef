package dev.llmquota.client;

import java.time.Duration;

/**
 * What to do with one attempt's answer: hand it to the caller, try again after a wait, or
 * fail the call.
 *
 * @param action the action
 * @param delay the wait before the next attempt, for {@link Action#RETRY}
 * @param failure the exception to fail the call with, for {@link Action#FAIL}
 */
public record Outcome(Action action, Duration delay, RuntimeException failure) {

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

	static Outcome fail(RuntimeException failure) {
		return new Outcome(Action.FAIL, null, failure);
	}

}
