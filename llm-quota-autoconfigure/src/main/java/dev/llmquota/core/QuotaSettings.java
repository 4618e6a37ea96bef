package dev.llmquota.core;

import java.time.Duration;

/**
 * Immutable engine-wide settings.
 *
 * @param headroom share of each published limit the client plans to use, in (0, 1]
 * @param maxWait longest a call waits for admission
 * @param leaseTimeout after this a call never completed or closed gives its slots back
 * @param maxPools the most pools made for unlisted models; least recently used go first
 * @param exhaustedProbeInterval while a quota is spent with no known reset, one call goes
 * through this often to see whether it is back
 * @param interactiveReserve the share of every rate bucket batch calls may not take while
 * interactive calls wait, in [0, 1)
 * @param lendAfter how long after the last interactive wait the reserve is lent to batch
 * calls
 */
public record QuotaSettings(double headroom, Duration maxWait, Duration leaseTimeout, int maxPools,
		Duration exhaustedProbeInterval, double interactiveReserve, Duration lendAfter) {

	/**
	 * Settings without an interactive reserve.
	 * @param headroom share of each published limit to plan for
	 * @param maxWait longest wait for admission
	 * @param leaseTimeout when an unfinished call gives its slots back
	 * @param maxPools the most pools for unlisted models
	 * @param exhaustedProbeInterval how often a probe goes through a spent quota
	 */
	public QuotaSettings(double headroom, Duration maxWait, Duration leaseTimeout, int maxPools,
			Duration exhaustedProbeInterval) {
		this(headroom, maxWait, leaseTimeout, maxPools, exhaustedProbeInterval, 0, Duration.ofSeconds(10));
	}

	public QuotaSettings {
		if (!(headroom > 0 && headroom <= 1)) {
			throw new IllegalArgumentException("headroom must be in (0, 1] but was " + headroom);
		}
		if (maxWait.isNegative()) {
			throw new IllegalArgumentException("max wait must not be negative but was " + maxWait);
		}
		if (leaseTimeout.isNegative() || leaseTimeout.isZero()) {
			throw new IllegalArgumentException("lease timeout must be positive but was " + leaseTimeout);
		}
		if (exhaustedProbeInterval.isNegative() || exhaustedProbeInterval.isZero()) {
			throw new IllegalArgumentException("probe interval must be positive but was " + exhaustedProbeInterval);
		}
		if (!(interactiveReserve >= 0 && interactiveReserve < 1)) {
			throw new IllegalArgumentException("interactive reserve must be in [0, 1) but was " + interactiveReserve);
		}
		if (lendAfter.isNegative()) {
			throw new IllegalArgumentException("lend-after must not be negative but was " + lendAfter);
		}
		if (maxPools < 1) {
			throw new IllegalArgumentException("max pools must be at least 1 but was " + maxPools);
		}
	}

	/**
	 * Returns the locally enforced share of a published limit, never below 1.
	 * @param limit the published limit
	 * @return {@code floor(limit x headroom)}, at least 1
	 */
	public long enforced(long limit) {
		return Math.max(1, (long) Math.floor(limit * this.headroom + 1e-9));
	}

}
