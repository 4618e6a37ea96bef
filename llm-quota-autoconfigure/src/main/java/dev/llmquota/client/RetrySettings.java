package dev.llmquota.client;

import java.time.Duration;

/**
 * How provider refusals are retried.
 *
 * @param maxAttempts attempts in all, the first included
 * @param initialBackoff the wait before a retry when the provider names none; doubled per
 * attempt
 * @param maxBackoff the longest wait before a retry; a provider asking for longer fails
 * the call at once
 * @param exhaustedThreshold a provider wait this long or longer means a spent quota
 */
public record RetrySettings(int maxAttempts, Duration initialBackoff, Duration maxBackoff,
		Duration exhaustedThreshold) {

	/** Defaults matching the properties' defaults. */
	public static final RetrySettings DEFAULTS = new RetrySettings(4, Duration.ofMillis(500), Duration.ofSeconds(60),
			Duration.ofHours(1));

	public RetrySettings {
		if (maxAttempts < 1) {
			throw new IllegalArgumentException("max attempts must be at least 1 but was " + maxAttempts);
		}
	}

}
