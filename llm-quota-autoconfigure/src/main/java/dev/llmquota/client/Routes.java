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
final class Routes {

	private final List<Entry> entries;

	private final Map<String, Route> byId;

	private record Entry(String prefix, Route route) {

	}

	Routes(QuotaConfig config, Map<String, Credentials> credentials) {
		List<Entry> entries = new ArrayList<>();
		Map<String, Route> byId = new HashMap<>();
		for (ProviderSpec provider : config.providers().values()) {
			Route route = new Route(provider, Dialect.of(dialect(provider)),
					credentials.getOrDefault(provider.id(), Credentials.NONE));
			entries.add(new Entry(normalize(provider.baseUrl().toString()), route));
			byId.put(provider.id(), route);
		}
		// longest prefix first; among equal prefixes, entries that need a header first
		entries.sort(Comparator.comparingInt((Entry entry) -> entry.prefix.length())
			.reversed()
			.thenComparing((entry) -> entry.route.provider().matchHeader().isEmpty()));
		this.entries = List.copyOf(entries);
		this.byId = Map.copyOf(byId);
	}

	private static DialectId dialect(ProviderSpec provider) {
		return DialectId.valueOf(provider.dialect().toUpperCase(Locale.ROOT).replace('-', '_'));
	}

	Route byId(String id) {
		return this.byId.get(id);
	}

	/** The entries of one dialect. */
	List<Route> ofDialect(DialectId dialect) {
		return this.byId.values().stream().filter((route) -> route.dialect().id() == dialect).toList();
	}

	Route match(URI uri, HeaderLookup headers) {
		if (this.entries.isEmpty()) {
			return null;
		}
		String url = normalize(uri.toString());
		for (Entry entry : this.entries) {
			if (startsWith(url, entry.prefix) && headerMatches(entry.route.provider(), headers)) {
				return entry.route;
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
