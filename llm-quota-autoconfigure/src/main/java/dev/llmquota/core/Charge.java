package dev.llmquota.core;

/**
 * Units taken from one bucket.
 *
 * @param bucket the bucket
 * @param units the units, never negative
 */
public record Charge(BucketSpec bucket, long units) {

}
