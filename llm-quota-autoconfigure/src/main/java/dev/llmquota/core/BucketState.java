package dev.llmquota.core;

/**
 * What a store holds for one bucket at a moment.
 *
 * @param remaining units available now (negative while in debt); for a daily counter, the
 * units left today
 * @param capacity the most units the bucket holds
 * @param nanosUntilFull nanoseconds until the bucket is full again, or until the next day
 * for a daily counter
 */
public record BucketState(long remaining, long capacity, long nanosUntilFull) {

}
