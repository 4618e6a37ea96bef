package dev.llmquota.provider;

/**
 * Reads response headers by name, ignoring case.
 */
@FunctionalInterface
public interface HeaderLookup {

	/**
	 * Returns the first value of a header.
	 * @param name the header name, any case
	 * @return the value, or {@code null} if absent
	 */
	String get(String name);

}
