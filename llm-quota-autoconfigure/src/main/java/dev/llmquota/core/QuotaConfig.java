package dev.llmquota.core;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The engine's whole immutable configuration.
 *
 * @param settings engine-wide settings
 * @param providers provider entries by id
 */
public record QuotaConfig(QuotaSettings settings, Map<String, ProviderSpec> providers) {

	public QuotaConfig {
		// in the order configured: whatever iterates them sees the same order every run
		providers = Collections.unmodifiableMap(new LinkedHashMap<>(providers));
	}

}
