package dev.llmquota.store;

import java.time.Instant;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.llmquota.core.Charge;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Corrections of calls booked in Redis that ended while it did not answer, in order: they
 * land when it answers again. Bounded: beyond the bound later ones are dropped, with one
 * warning.
 */
final class PendingCorrections {

	private static final Log logger = LogFactory.getLog(RedisQuotaStore.class);

	/** How many corrections wait for Redis to answer again, at most. */
	static final int MAX_PENDING = 100_000;

	private final Queue<Pending> pending = new ConcurrentLinkedQueue<>();

	private final AtomicBoolean dropped = new AtomicBoolean();

	void add(List<Charge> corrections, Instant wallNow, Instant bookedAt) {
		if (this.pending.size() < MAX_PENDING) {
			this.pending.add(new Pending(corrections, wallNow, bookedAt));
		}
		else if (this.dropped.compareAndSet(false, true)) {
			logger.warn("Redis has not answered for a while: llm-quota keeps no more than " + MAX_PENDING
					+ " corrections for it, and drops later ones until it is back (refunds lost keep the books"
					+ " above the provider's; charges lost are taken back by its rate-limit headers)");
		}
	}

	/** Hands every waiting correction over, oldest first. */
	void drainTo(Sink sink) {
		Pending correction;
		while ((correction = this.pending.poll()) != null) {
			sink.accept(correction.corrections(), correction.wallNow(), correction.bookedAt());
		}
		this.dropped.set(false);
	}

	/**
	 * Where waiting corrections go: each with the wall time it was made at and its
	 * booking's.
	 */
	@FunctionalInterface
	interface Sink {

		void accept(List<Charge> corrections, Instant wallNow, Instant bookedAt);

	}

	private record Pending(List<Charge> corrections, Instant wallNow, Instant bookedAt) {

	}

}
