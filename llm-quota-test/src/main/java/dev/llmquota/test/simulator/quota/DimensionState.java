package dev.llmquota.test.simulator.quota;

import java.time.Duration;

/**
 * What one meter shows now: its published limit, what is left and how long until it is
 * full again.
 *
 * @param dimension the dimension
 * @param scope {@code account} or the model's name
 * @param limit the published limit (per minute, per day or in flight)
 * @param remaining what a call could take now, never below zero
 * @param untilFull time until the meter is back to its full capacity
 */
public record DimensionState(Dimension dimension, String scope, long limit, long remaining, Duration untilFull) {

}
