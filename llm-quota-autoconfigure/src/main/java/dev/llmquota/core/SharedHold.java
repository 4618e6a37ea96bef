package dev.llmquota.core;

/**
 * What the processes sharing a store hold a pool (or an account) under now: a provider's
 * penalty one of them heard, a spent quota one of them heard. It is what holds or refuses
 * every replica's calls, whether or not a replica heard it itself.
 *
 * @param penalized the dimension of the penalty in force, or {@code null}
 * @param penaltyNanos how long the penalty lasts from now, 0 if none
 * @param exhausted whether a spent quota is in force
 * @param reason what the provider said of it, or {@code null}
 * @param resetNanos how long until it comes back, from now, or -1 if unknown
 */
public record SharedHold(Dimension penalized, long penaltyNanos, boolean exhausted, String reason, long resetNanos) {

	/**
	 * Returns the state this hold puts a pool in.
	 * @return the state
	 */
	public QuotaState state() {
		return this.exhausted ? QuotaState.EXHAUSTED : (this.penaltyNanos > 0) ? QuotaState.THROTTLED : QuotaState.OK;
	}

}
