package dev.llmquota.autoconfigure;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.llmquota.client.Credentials;
import dev.llmquota.core.ProviderSpec;
import dev.llmquota.core.QuotaConfig;

/**
 * Reads {@code llm.quota.providers.<id>.headers} into the credentials of each entry,
 * refusing what no HTTP stack could send. A mistake names the property, never the value.
 */
final class EntryCredentials {

	/** A header name: an HTTP token. */
	private static final Pattern NAME = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");

	/** Headers of the message's framing, which the HTTP stack sets itself. */
	private static final Set<String> FRAMING = Set.of("host", "content-length", "transfer-encoding", "connection",
			"content-type");

	private EntryCredentials() {
	}

	/**
	 * Whether a name is one an HTTP header can have.
	 * @param name the name
	 * @return whether it is an HTTP token
	 */
	static boolean isHeaderName(String name) {
		return NAME.matcher(name).matches();
	}

	/**
	 * Each entry's headers, its {@code match-header} among them: a route's attempt to an
	 * entry told apart by a header carries that header, so the provider charges the
	 * account whose books the attempt is booked on (not the caller's, or the key's
	 * default one).
	 */
	static Map<String, Credentials> of(LlmQuotaProperties properties, QuotaConfig config) {
		Map<String, Credentials> credentials = new HashMap<>();
		properties.getProviders().forEach((id, provider) -> {
			String prefix = QuotaConfigFactory.PREFIX + "providers." + id + ".";
			provider.getHeaders().forEach((name, value) -> check(prefix + "headers." + name, name, value));
			Map<String, String> sent = new LinkedHashMap<>(provider.getHeaders());
			// the match-header as start-up validated it (its name trimmed)
			ProviderSpec spec = config.providers().get(id);
			ProviderSpec.MatchHeader match = (spec != null) ? spec.matchHeader().orElse(null) : null;
			if (match != null) {
				sent.forEach((name, value) -> {
					if (name.equalsIgnoreCase(match.name()) && !match.value().equals(value)) {
						throw new InvalidQuotaPropertyException(prefix + "headers." + name, "(hidden)",
								"it sends another " + match.name() + " than the entry's match-header.value, so its"
										+ " calls would be charged to another account than the one they are booked on",
								"remove it: the entry sends its match-header itself.");
					}
				});
				sent.keySet().removeIf((name) -> name.equalsIgnoreCase(match.name()));
				sent.put(match.name(), match.value());
			}
			credentials.put(id, Credentials.of(sent));
		});
		return credentials;
	}

	/** A placeholder left as written, and the name in it. */
	private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([^}:]*)(?::[^}]*)?}");

	private static void check(String property, String name, String value) {
		if (!isHeaderName(name)) {
			throw new InvalidQuotaPropertyException(property, "(hidden)", "'" + name + "' is not an HTTP header name",
					"use the header's name as the key, for example api-key or x-api-key.");
		}
		if (FRAMING.contains(name.toLowerCase(Locale.ROOT))) {
			throw new InvalidQuotaPropertyException(property, "(hidden)", "the HTTP client sets " + name + " itself",
					"remove it; only credentials and the like go here.");
		}
		Matcher placeholder = PLACEHOLDER.matcher((value != null) ? value : "");
		if (placeholder.find()) {
			// the binder leaves a placeholder it cannot resolve as it is
			throw new InvalidQuotaPropertyException(property, "(hidden)",
					"its placeholder " + placeholder.group() + " was not resolved: " + placeholder.group(1)
							+ " is set nowhere Spring looks, so the placeholder's text would be sent as the credential",
					"set " + placeholder.group(1) + " (an environment variable or a property), or give the placeholder"
							+ " a default: ${" + placeholder.group(1) + ":...}.");
		}
		if (value == null || value.isBlank() || value.chars().anyMatch((c) -> c == '\r' || c == '\n' || c == 0)) {
			throw new InvalidQuotaPropertyException(property, "(hidden)", "the value is empty or holds a line break",
					"set the credential itself, for example from an environment variable: ${AZURE_EAST_KEY}.");
		}
	}

}
