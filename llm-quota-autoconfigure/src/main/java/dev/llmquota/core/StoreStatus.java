package dev.llmquota.core;

import java.time.Instant;

/**
 * How a store is doing, for health and metrics.
 *
 * @param backend {@code local} or {@code redis}
 * @param reachable whether its server answers (always, for the in-process store)
 * @param fallback whether calls are served by a local fallback while the server is
 * unreachable
 * @param fallbacks how many times the store fell back since start
 * @param since when the store became unreachable, or {@code null} while it answers
 */
public record StoreStatus(String backend, boolean reachable, boolean fallback, long fallbacks, Instant since) {

	/** The status of the in-process store. */
	public static final StoreStatus LOCAL = new StoreStatus("local", true, false, 0, null);

}
