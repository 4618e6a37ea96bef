package dev.llmquota.client;

import dev.llmquota.core.ProviderSpec;
import dev.llmquota.provider.Dialect;

/**
 * The provider entry that governs a call, with its dialect and the headers set on its
 * calls.
 *
 * @param provider the provider entry
 * @param dialect its dialect
 * @param credentials the headers set on every call it governs
 * @param route the route a call addresses, or {@code null} for an entry's own calls: then
 * provider and dialect are its first target's, and each attempt's target is chosen at its
 * admission
 */
public record ProviderEntry(ProviderSpec provider, Dialect dialect, Credentials credentials, Route route) {

	/**
	 * An entry's own calls, with the headers set on them.
	 * @param provider the provider entry
	 * @param dialect its dialect
	 * @param credentials the headers set on every call it governs
	 */
	public ProviderEntry(ProviderSpec provider, Dialect dialect, Credentials credentials) {
		this(provider, dialect, credentials, null);
	}

	/**
	 * An entry whose calls carry the client's own headers.
	 * @param provider the provider entry
	 * @param dialect its dialect
	 */
	public ProviderEntry(ProviderSpec provider, Dialect dialect) {
		this(provider, dialect, Credentials.NONE);
	}

}
