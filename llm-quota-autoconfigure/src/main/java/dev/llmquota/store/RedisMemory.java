package dev.llmquota.store;

import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

import dev.llmquota.core.BucketSpec;

/**
 * What a replica remembers of the shared books between round trips: the epochs of the
 * books it has used (so Redis can tell lost books from new ones), the last level Redis
 * gave of each rate bucket (for the fallback books to start from), and the latest wall
 * time it was given.
 */
final class RedisMemory {

	/**
	 * The epoch keys of the books this replica has used: a book or correction after the
	 * first tells Redis that a missing epoch means the books were lost (see quota.lua).
	 */
	private final Set<String> epochs = ConcurrentHashMap.newKeySet();

	private final Map<String, QuotaScript.Seen> seen = new ConcurrentHashMap<>();

	private final AtomicReference<Instant> latestWall = new AtomicReference<>(Instant.MIN);

	/**
	 * Answers, once per epoch key, that it is this replica's first use of those books.
	 */
	Predicate<String> firstUse() {
		return this.epochs::add;
	}

	/** Whether an epoch key's books are not used yet, for a read: marks nothing. */
	Predicate<String> unused() {
		return (epoch) -> !this.epochs.contains(epoch);
	}

	void saw(List<QuotaScript.Seen> levels) {
		levels.forEach((level) -> this.seen.put(level.bucket().key(), level));
	}

	Collection<QuotaScript.Seen> seen() {
		return this.seen.values();
	}

	void forget(List<BucketSpec> buckets) {
		buckets.forEach((bucket) -> this.seen.remove(bucket.key()));
	}

	/**
	 * The wall time for calendar days, never earlier than any this store was given: a
	 * wall clock set back across midnight must not open a new count of a day already
	 * counted, as the local store's counters never do.
	 */
	Instant wall(Instant given) {
		return this.latestWall.accumulateAndGet(given, (seen, now) -> now.isAfter(seen) ? now : seen);
	}

	Instant latestWall() {
		return this.latestWall.get();
	}

}
