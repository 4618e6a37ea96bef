package dev.llmquota.store;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * What a replica follows of each provider entry in Redis, once a second: the limits an
 * operator changed at run time, and how many replicas are live for the entry (each says
 * so with an expiring entry), which sets its share of the limits in fallback.
 */
final class ProviderEntries {

	private static final Log logger = LogFactory.getLog(RedisQuotaStore.class);

	private final RedisConnection redis;

	private final RedisAvailability availability;

	private final String replica;

	private final double localShare;

	/** How long a replica counts as live after it last said so. */
	private final Duration aliveFor;

	/** Limits changed at run time that this replica follows, by key. */
	private final Map<String, LimitWatch> limitWatches = new ConcurrentHashMap<>();

	/** Replicas live for each provider entry (by hash tag) when Redis last said. */
	private final Map<String, Long> liveReplicas = new ConcurrentHashMap<>();

	ProviderEntries(RedisConnection redis, RedisAvailability availability, String replica, double localShare,
			Duration aliveFor) {
		this.redis = redis;
		this.availability = availability;
		this.replica = replica;
		this.localShare = localShare;
		this.aliveFor = aliveFor;
	}

	/** Follows an entry: its changed limits go to the listener. */
	void watch(String key, BiConsumer<String, Long> listener) {
		LimitWatch watch = new LimitWatch(listener);
		this.limitWatches.put(key, watch);
		readLimits(key, watch);
		sayAlive(key);
	}

	/**
	 * Reads every entry's limits and says this replica is live for it, if Redis is up.
	 */
	void tick() {
		this.limitWatches.forEach(this::readLimits);
		this.limitWatches.keySet().forEach(this::sayAlive);
	}

	/**
	 * This replica's share of a provider entry's limits in fallback: {@code local-share}
	 * at most, and one over the replicas live for the entry when Redis last said.
	 */
	double share(String hashTag) {
		long live = this.liveReplicas.getOrDefault(hashTag, 1L);
		return Math.min(this.localShare, 1.0 / Math.max(1, live));
	}

	/** Says this replica is live for a provider entry, and learns how many are. */
	private void sayAlive(String entryKey) {
		if (this.redis.closed() || !this.availability.up()) {
			return;
		}
		this.redis.execute(QuotaScript.alive(entryKey, this.replica, this.aliveFor)).whenComplete((reply, error) -> {
			if (error != null) {
				this.availability.failed(error);
			}
			else {
				this.liveReplicas.put(QuotaScript.hashTag(entryKey), QuotaScript.liveReplicas(reply));
			}
		});
	}

	/**
	 * Reads a provider entry's changed limits and tells its listener of a new version.
	 */
	private void readLimits(String key, LimitWatch watch) {
		if (this.redis.closed() || !this.availability.up()) {
			return;
		}
		this.redis.execute(QuotaScript.limits(key, this.redis.time())).whenComplete((reply, error) -> {
			if (error != null) {
				this.availability.failed(error);
				return;
			}
			Map<String, Long> limits = QuotaScript.limits(reply);
			Long version = limits.remove("v");
			if (version != null && watch.version.getAndSet(version) != version) {
				try {
					limits.forEach(watch.listener);
				}
				catch (RuntimeException ex) {
					// the engine's failure, not Redis's
					logger.warn("llm-quota could not apply limits changed at run time", ex);
				}
			}
		});
	}

	/** A provider entry's limits changed at run time, and the version last applied. */
	private record LimitWatch(BiConsumer<String, Long> listener, AtomicLong version) {

		LimitWatch(BiConsumer<String, Long> listener) {
			this(listener, new AtomicLong(-1));
		}

	}

}
