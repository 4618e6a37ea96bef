package dev.llmquota.core;

import java.util.Map;

/**
 * The engine's whole immutable configuration.
 *
 * @param settings engine-wide settings
 * @param providers provider entries by id
 */
public record QuotaConfig(QuotaSettings settings, Map<String, ProviderSpec> providers) {

	public QuotaConfig {
		providers = Map.copyOf(providers);
	}

}
