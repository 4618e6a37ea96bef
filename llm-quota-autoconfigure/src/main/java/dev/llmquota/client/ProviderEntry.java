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
	 * Returns the dialect a call to a path of this entry speaks: the entry's, at the part
	 * of the path below its {@code base-url} (a gateway's own prefix says nothing of the
	 * API).
	 * @param path the call's raw path, or {@code null}
	 * @return the dialect
	 */
	public Dialect dialectAt(String path) {
		return (path != null) ? this.dialect.at(path, below(path)) : this.dialect;
	}

	/**
	 * Returns where the part of a call's raw path below this entry's {@code base-url}
	 * starts (matched as the entry lookup matches, ignoring case): what names its
	 * endpoint, whatever a gateway's path before it says.
	 * @param path the call's raw path
	 * @return the index, 0 where the base-url has no path or the path is not below it
	 */
	public int below(String path) {
		String base = this.provider.baseUrl().getRawPath();
		int length = (base == null) ? 0 : base.endsWith("/") ? base.length() - 1 : base.length();
		return (length > 0 && path.regionMatches(true, 0, base, 0, length)) ? length : 0;
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
