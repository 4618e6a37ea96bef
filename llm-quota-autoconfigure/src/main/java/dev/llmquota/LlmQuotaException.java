package dev.llmquota;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * Base of every exception llm-quota raises; names the provider entry, region, model and
 * dimension concerned.
 */
public abstract class LlmQuotaException extends RuntimeException {

	private final String provider;

	private final String region;

	private final String model;

	private final String dimension;

	protected LlmQuotaException(String message, String provider, String region, String model, String dimension,
			Throwable cause) {
		super(message, cause);
		this.provider = provider;
		this.region = region;
		this.model = model;
		this.dimension = dimension;
	}

	/**
	 * Returns the provider entry's id.
	 * @return the provider entry
	 */
	public String getProvider() {
		return this.provider;
	}

	/**
	 * Returns the provider entry's region label.
	 * @return the region
	 */
	public String getRegion() {
		return this.region;
	}

	/**
	 * Returns the model.
	 * @return the model id
	 */
	public String getModel() {
		return this.model;
	}

	/**
	 * Returns the contract name of the dimension concerned, for example
	 * {@code tokens-per-minute}.
	 * @return the dimension, or {@code null} when none applies
	 */
	public String getDimension() {
		return this.dimension;
	}

	/**
	 * Returns how long to wait before the call may succeed, for a {@code Retry-After}
	 * answer: the time until the blocking bucket would admit it, the provider's wait, or
	 * the time until a spent quota or budget resets.
	 * @return the wait, or {@code null} when no time is known
	 */
	public Duration getRetryAfter() {
		return null;
	}

	/** The time from now until an instant, never negative; {@code null} stays null. */
	static Duration until(Instant instant) {
		if (instant == null) {
			return null;
		}
		Duration left = Duration.between(Instant.now(), instant);
		return left.isNegative() ? Duration.ZERO : left;
	}

	static String where(String provider, String region, String model) {
		return "provider '" + provider + "' (region " + Objects.toString(region, "-") + "), model '" + model + "'";
	}

}
