package dev.llmquota.client;

import dev.llmquota.core.ProviderSpec;
import dev.llmquota.provider.Dialect;

/**
 * The provider entry that governs a call, with its dialect.
 *
 * @param provider the provider entry
 * @param dialect its dialect
 */
public record Route(ProviderSpec provider, Dialect dialect) {

}
