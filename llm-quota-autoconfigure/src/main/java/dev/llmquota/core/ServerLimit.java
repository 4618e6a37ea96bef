package dev.llmquota.core;

import java.time.Instant;

/**
 * What a provider's rate-limit headers said about one dimension; any part may be missing.
 *
 * @param dimension the dimension reported
 * @param limit the published limit, or {@code null}
 * @param remaining the units left, or {@code null}
 * @param reset when the provider's bucket is full again, or {@code null}
 */
public record ServerLimit(Dimension dimension, Long limit, Long remaining, Instant reset) {

}
