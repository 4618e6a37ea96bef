package dev.llmquota.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds the stored buckets of a scope from its limits.
 */
final class Buckets {

	private Buckets() {
	}

	static List<BucketSpec> of(ProviderSpec provider, BucketSpec.Scope scope, String scopeKey, Limits limits,
			Duration burstWindow, QuotaSettings settings) {
		List<BucketSpec> buckets = new ArrayList<>();
		limits.asMap().forEach((dimension, limit) -> {
			if (dimension.kind() == Dimension.Kind.CONCURRENCY) {
				return;
			}
			long enforced = settings.enforced(limit);
			long capacity = (dimension.kind() == Dimension.Kind.DAILY) ? enforced : capacity(enforced, burstWindow);
			// The hash tag keeps every key of one provider entry in one Redis Cluster
			// slot.
			String key = "llmq:{" + provider.id() + "}:" + scopeKey + ":" + dimension.id();
			buckets.add(new BucketSpec(key, scope, dimension, enforced, capacity, provider.dayZone()));
		});
		return List.copyOf(buckets);
	}

	/**
	 * Returns a rate bucket's capacity: the enforced rate times the burst window, at
	 * least 1.
	 * @param enforcedPerMinute the enforced rate
	 * @param burstWindow the burst window
	 * @return the capacity
	 */
	static long capacity(long enforcedPerMinute, Duration burstWindow) {
		return Math.max(1, Arith.mulDiv(enforcedPerMinute, burstWindow.toNanos(), Arith.NANOS_PER_MINUTE));
	}

}
