package dev.llmquota.core;

/**
 * Units taken from one bucket.
 *
 * @param bucket the bucket
 * @param units the units; negative only in a correction, which refunds
 */
public record Charge(BucketSpec bucket, long units) {

}
