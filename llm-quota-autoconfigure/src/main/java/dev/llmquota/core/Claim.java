package dev.llmquota.core;

import java.util.List;

/**
 * What one call asks of a store in one booking.
 *
 * @param charges the units per bucket
 * @param slots the in-flight slots shared with other processes, one each
 * @param holds the keys of the holds that may stop the call: its pool's and its account's
 */
public record Claim(List<Charge> charges, List<BucketSpec> slots, List<String> holds) {

}
