package dev.llmquota.core;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import dev.llmquota.core.kernel.Arith;

/**
 * What the local books hold for one pool and its account at a moment.
 *
 * @param pool the pool
 * @param buckets the stored buckets, pool first, then account
 * @param gates the in-flight gates, pool first, then account
 * @param latency the whole-call latency the in-flight bounds use
 * @param latencyObserved whether that latency was observed rather than configured
 */
public record PoolSnapshot(Pool pool, List<BucketSnapshot> buckets, List<GateSnapshot> gates, Duration latency,
		boolean latencyObserved) {

	/**
	 * One stored bucket.
	 *
	 * @param bucket the bucket
	 * @param remaining units available now (negative while in debt)
	 * @param untilFull time until the bucket is full again (for a daily counter, until
	 * the next day)
	 */
	public record BucketSnapshot(BucketSpec bucket, long remaining, Duration untilFull) {

	}

	/**
	 * One in-flight gate.
	 *
	 * @param dimension the dimension it bounds
	 * @param scope pool or account
	 * @param derived whether it is a Little's-law bound of a rate
	 * @param capacity the most units outstanding at once
	 * @param inUse the units held now
	 */
	public record GateSnapshot(Dimension dimension, BucketSpec.Scope scope, boolean derived, long capacity,
			long inUse) {

		/**
		 * Returns what is free of the gate in the provider's terms:
		 * {@code floor(limit x free / capacity)}, at least 0.
		 * @param limit the published limit
		 * @return the free units of the published limit
		 */
		public long inProviderTerms(long limit) {
			long free = this.capacity - this.inUse;
			return (free <= 0) ? 0 : (free >= this.capacity) ? limit : Arith.mulDiv(limit, free, this.capacity);
		}

	}

	static GateSnapshot of(InFlightGate gate, BucketSpec.Scope scope) {
		return new GateSnapshot(gate.dimension(), scope, gate.derived(), gate.capacity(), gate.inUse());
	}

	static PoolSnapshot of(Pool pool, QuotaStore store, QuotaClock clock) {
		long now = clock.nanoTime();
		Instant wallNow = clock.instant();
		List<BucketSnapshot> buckets = new ArrayList<>();
		for (List<BucketSpec> scope : List.of(pool.buckets(), pool.account().buckets())) {
			for (BucketSpec bucket : scope) {
				BucketState state = store.state(bucket, now, wallNow);
				buckets.add(new BucketSnapshot(bucket, state.remaining(), Duration.ofNanos(state.nanosUntilFull())));
			}
		}
		List<GateSnapshot> gates = pool.account().queue().read(() -> {
			List<GateSnapshot> list = new ArrayList<>();
			pool.gates().forEach((gate) -> list.add(of(gate, BucketSpec.Scope.POOL)));
			pool.account().gates().forEach((gate) -> list.add(of(gate, BucketSpec.Scope.ACCOUNT)));
			return list;
		});
		return new PoolSnapshot(pool, List.copyOf(buckets), List.copyOf(gates),
				Duration.ofNanos(pool.latency().nanos()), pool.latency().observed());
	}

	/**
	 * Returns the snapshot of one stored bucket.
	 * @param scope pool or account
	 * @param dimension the dimension
	 * @return the bucket's snapshot, or {@code null} if that dimension is not limited
	 * there
	 */
	public BucketSnapshot bucket(BucketSpec.Scope scope, Dimension dimension) {
		return this.buckets.stream()
			.filter((b) -> b.bucket().scope() == scope && b.bucket().dimension() == dimension)
			.findFirst()
			.orElse(null);
	}

	/**
	 * Returns the snapshot of one gate.
	 * @param scope pool or account
	 * @param dimension the dimension it bounds
	 * @param derived whether the Little's-law bound rather than the configured one
	 * @return the gate's snapshot, or {@code null} if there is none
	 */
	public GateSnapshot gate(BucketSpec.Scope scope, Dimension dimension, boolean derived) {
		return this.gates.stream()
			.filter((g) -> g.scope() == scope && g.dimension() == dimension && g.derived() == derived)
			.findFirst()
			.orElse(null);
	}

}
