package dev.llmquota.client;

import java.net.URI;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.llmquota.core.ProviderSpec;
import dev.llmquota.core.QuotaConfig;
import dev.llmquota.provider.Dialect;
import dev.llmquota.provider.DialectId;
import dev.llmquota.provider.HeaderLookup;

/**
 * Finds the provider entry that governs a call: the longest {@code base-url} the call's
 * URL starts with, whose {@code match-header} (if any) the call carries.
 */
final class EntryLookup {

	private final List<Prefix> prefixes;

	private final Map<String, ProviderEntry> byId;

	private record Prefix(String prefix, ProviderEntry entry) {

	}

	EntryLookup(QuotaConfig config, Map<String, Credentials> credentials) {
		List<Prefix> prefixes = new ArrayList<>();
		Map<String, ProviderEntry> byId = new HashMap<>();
		for (ProviderSpec provider : config.providers().values()) {
			ProviderEntry entry = new ProviderEntry(provider, Dialect.of(dialect(provider)),
					credentials.getOrDefault(provider.id(), Credentials.NONE));
			prefixes.add(new Prefix(normalize(provider.baseUrl().toString()), entry));
			byId.put(provider.id(), entry);
		}
		// longest prefix first; among equal prefixes, entries that need a header first
		prefixes.sort(Comparator.comparingInt((Prefix prefix) -> prefix.prefix.length())
			.reversed()
			.thenComparing((prefix) -> prefix.entry.provider().matchHeader().isEmpty()));
		this.prefixes = List.copyOf(prefixes);
		this.byId = Map.copyOf(byId);
	}

	private static DialectId dialect(ProviderSpec provider) {
		return DialectId.valueOf(provider.dialect().toUpperCase(Locale.ROOT).replace('-', '_'));
	}

	ProviderEntry byId(String id) {
		return this.byId.get(id);
	}

	/** The entries of one dialect. */
	List<ProviderEntry> ofDialect(DialectId dialect) {
		return this.byId.values().stream().filter((entry) -> entry.dialect().id() == dialect).toList();
	}

	ProviderEntry match(URI uri, HeaderLookup headers) {
		if (this.prefixes.isEmpty()) {
			return null;
		}
		String url = normalize(uri.toString());
		for (Prefix prefix : this.prefixes) {
			if (startsWith(url, prefix.prefix) && headerMatches(prefix.entry.provider(), headers)) {
				return prefix.entry;
			}
		}
		return null;
	}

	private static boolean startsWith(String url, String prefix) {
		if (!url.regionMatches(true, 0, prefix, 0, prefix.length())) {
			return false;
		}
		if (url.length() == prefix.length() || prefix.endsWith("/")) {
			return true;
		}
		char next = url.charAt(prefix.length());
		return next == '/' || next == '?' || next == '#';
	}

	private static boolean headerMatches(ProviderSpec provider, HeaderLookup headers) {
		return provider.matchHeader().map((header) -> header.value().equals(headers.get(header.name()))).orElse(true);
	}

	private static String normalize(String url) {
		return (url.endsWith("/") && url.length() > 1) ? url.substring(0, url.length() - 1) : url;
	}

}
