package dev.llmquota.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.llmquota.core.kernel.Arith;

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
			// headroom is for the provider's limits; a money budget is the user's own
			long enforced = dimension.countsMoney() ? limit : settings.enforced(limit);
			long capacity = (dimension.kind() == Dimension.Kind.DAILY) ? enforced : capacity(enforced, burstWindow);
			buckets.add(new BucketSpec(key(provider, scopeKey, dimension.id()), scope, dimension, enforced, capacity,
					provider.dayZone()));
		});
		return List.copyOf(buckets);
	}

	/**
	 * Returns the in-flight slots a scope shares with other processes: its
	 * {@code concurrent-requests}, if configured.
	 */
	static List<BucketSpec> slots(ProviderSpec provider, BucketSpec.Scope scope, String scopeKey, Limits limits,
			QuotaSettings settings) {
		Long limit = limits.asMap().get(Dimension.CONCURRENT_REQUESTS);
		if (limit == null) {
			return List.of();
		}
		long enforced = settings.enforced(limit);
		return List.of(new BucketSpec(key(provider, scopeKey, Dimension.CONCURRENT_REQUESTS.id()), scope,
				Dimension.CONCURRENT_REQUESTS, enforced, enforced, provider.dayZone()));
	}

	/**
	 * Returns a store key of a provider entry. The hash tag keeps every key of one entry
	 * in one Redis Cluster slot, so one script may touch them all.
	 * @param provider the provider entry
	 * @param scopeKey {@code account} or {@code pool:<model>}
	 * @param name what the key holds
	 * @return the key
	 */
	static String key(ProviderSpec provider, String scopeKey, String name) {
		return "llmq:{" + provider.id() + "}:" + scopeKey + ":" + name;
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
