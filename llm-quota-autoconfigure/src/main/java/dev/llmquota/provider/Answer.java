package dev.llmquota.provider;

import java.time.Duration;
import java.time.Instant;

import dev.llmquota.core.Dimension;

/**
 * What a provider's refusal means, read from its body and headers rather than its status
 * alone.
 *
 * @param kind what to do about it
 * @param dimension the dimension it names, or {@code null} if it names none
 * @param delay the wait the provider advertises, or {@code null} if it gives none
 * @param wholeAccount whether it applies to every model of the provider entry (billing)
 * @param retryAllowed whether the provider allows a retry ({@code x-should-retry: false}
 * forbids it)
 * @param reason the provider's words, for people
 */
public record Answer(Kind kind, Dimension dimension, Duration delay, boolean wholeAccount, boolean retryAllowed,
		String reason) {

	/** The longest wait a spent quota's reset is believed to be: a month's budget. */
	static final Duration LONGEST_RESET = Duration.ofDays(31);

	/**
	 * What an answer calls for.
	 */
	public enum Kind {

		/**
		 * An answer that is not about quota: passed to the caller as the provider sent
		 * it.
		 */
		PASS,

		/** A rate limit on a dimension: wait it out, then try again through admission. */
		RATE_LIMITED,

		/** The provider is overloaded (not our quota): back off with jitter and retry. */
		OVERLOADED,

		/** An administrative quota is spent: never retried, later calls fail fast. */
		EXHAUSTED,

		/**
		 * A request that can never fit the limit as it is: passed through, not retried.
		 */
		TOO_LARGE

	}

	static Answer pass() {
		return new Answer(Kind.PASS, null, null, false, false, null);
	}

	static Answer rateLimited(Dimension dimension, Duration wait, boolean retryAllowed, String reason) {
		return new Answer(Kind.RATE_LIMITED, dimension, wait, false, retryAllowed, reason);
	}

	static Answer overloaded(Duration wait, boolean retryAllowed, String reason) {
		return new Answer(Kind.OVERLOADED, null, wait, false, retryAllowed, reason);
	}

	static Answer exhausted(Dimension dimension, boolean wholeAccount, String reason) {
		return new Answer(Kind.EXHAUSTED, dimension, null, wholeAccount, false, reason);
	}

	static Answer exhausted(Dimension dimension, Duration until, String reason) {
		return new Answer(Kind.EXHAUSTED, dimension, until, false, false, reason);
	}

	static Answer accountExhausted(Duration until, String reason) {
		return new Answer(Kind.EXHAUSTED, null, until, true, false, reason);
	}

	static Answer tooLarge(Dimension dimension, String reason) {
		return new Answer(Kind.TOO_LARGE, dimension, null, false, false, reason);
	}

	/**
	 * Returns this answer as a spent quota when the provider's wait is the threshold or
	 * longer (Azure's "retry after 86400 seconds" is a spent daily quota).
	 * @param threshold the wait at or above which an answer means a spent quota
	 * @return this answer, or an exhaustion
	 */
	public Answer withThreshold(Duration threshold) {
		if (this.kind == Kind.RATE_LIMITED && this.delay != null && this.delay.compareTo(threshold) >= 0) {
			return new Answer(Kind.EXHAUSTED, this.dimension, this.delay, this.wholeAccount, false, this.reason);
		}
		return this;
	}

	/**
	 * Returns when a spent quota comes back, if the provider said. A wait longer than any
	 * quota's period (a month) is not believed: the quota is then probed now and then, as
	 * one with no known reset, rather than held until a restart.
	 * @param now the current time
	 * @return the reset, or {@code null}
	 */
	public Instant reset(Instant now) {
		if (this.kind != Kind.EXHAUSTED || this.delay == null) {
			return null;
		}
		if (this.delay.compareTo(LONGEST_RESET) > 0) {
			LogOnce.warn("implausible wait", "llm-quota did not believe a provider's wait of " + this.delay
					+ ", longer than any quota's period; it probes the quota now and then instead");
			return null;
		}
		return now.plus(this.delay);
	}

}
