package dev.llmquota.core;

/**
 * How soon a call would be admitted on a pool were it asked now, as this process sees the
 * books, without taking anything: what a route compares across its targets.
 *
 * @param waitNanos how long until admission, 0 when it would be admitted at once, or
 * {@link #NEVER} when a spent quota would fail it
 * @param state the pool's state
 * @param binding what makes it wait, for people ({@code pool tokens-per-minute},
 * {@code provider penalty}, ...), or {@code null} when nothing does
 */
public record Headroom(long waitNanos, QuotaState state, String binding) {

	/** The wait of a call a spent quota would fail. */
	public static final long NEVER = Long.MAX_VALUE;

	/**
	 * Whether a spent quota would fail the call.
	 * @return whether it would
	 */
	public boolean never() {
		return this.waitNanos == NEVER;
	}

}
