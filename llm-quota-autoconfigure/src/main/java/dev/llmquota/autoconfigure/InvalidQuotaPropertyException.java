package dev.llmquota.autoconfigure;

import java.time.Duration;

/**
 * A property under {@code llm.quota} holds a value llm-quota cannot run with; start-up
 * stops and {@link LlmQuotaConfigurationFailureAnalyzer} reports the property and the
 * fix.
 */
public class InvalidQuotaPropertyException extends RuntimeException {

	private final String property;

	private final transient Object value;

	private final String fix;

	/**
	 * Creates the exception.
	 * @param property the property's full name
	 * @param value the value given
	 * @param reason what is wrong with it
	 * @param fix what to set instead
	 */
	public InvalidQuotaPropertyException(String property, Object value, String reason, String fix) {
		super("Invalid value '" + display(value) + "' for " + property + ": " + reason);
		this.property = property;
		this.value = value;
		this.fix = fix;
	}

	private static Object display(Object value) {
		if (value instanceof Duration duration) {
			return (duration.toNanos() % 1_000_000_000L == 0) ? duration.toSeconds() + "s"
					: (duration.toNanos() % 1_000_000L == 0) ? duration.toMillis() + "ms" : duration.toNanos() + "ns";
		}
		return value;
	}

	/**
	 * Returns the property's full name.
	 * @return the property
	 */
	public String getProperty() {
		return this.property;
	}

	/**
	 * Returns the value given.
	 * @return the value
	 */
	public Object getValue() {
		return this.value;
	}

	/**
	 * Returns what to set instead.
	 * @return the fix
	 */
	public String getFix() {
		return this.fix;
	}

}
