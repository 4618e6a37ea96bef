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
 */
public record ProviderEntry(ProviderSpec provider, Dialect dialect, Credentials credentials) {

	/**
	 * An entry whose calls carry the client's own headers.
	 * @param provider the provider entry
	 * @param dialect its dialect
	 */
	public ProviderEntry(ProviderSpec provider, Dialect dialect) {
		this(provider, dialect, Credentials.NONE);
	}

}
