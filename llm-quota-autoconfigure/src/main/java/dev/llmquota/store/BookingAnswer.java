package dev.llmquota.store;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;

import dev.llmquota.core.Booking;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * A booking's answer from Redis, on its way. An answer later than the connection's
 * patience is not a failure: a ping decides whether Redis is down (the call then falls
 * back) or slow (the call waits on, up to its own deadline). When the call stops waiting,
 * the booking's slots are released at once, and a booking that lands later is given back
 * in full, so no call is admitted both in Redis and locally.
 */
final class BookingAnswer {

	private static final Log logger = LogFactory.getLog(RedisQuotaStore.class);

	/** How often a call whose booking is late looks whether Redis was judged down. */
	private static final long LATE_STEP = 20_000_000L;

	private final RedisConnection redis;

	private final RedisAvailability availability;

	private final CompletableFuture<List<Object>> answer;

	private final Function<List<Object>, Booking> reading;

	BookingAnswer(RedisConnection redis, RedisAvailability availability, CompletableFuture<List<Object>> answer,
			Function<List<Object>, Booking> reading) {
		this.redis = redis;
		this.availability = availability;
		this.answer = answer;
		this.reading = reading;
	}

	/**
	 * Waits for the answer.
	 * @param patience the longest wait, the call's own time
	 * @param slots the booking's lease on shared slots, or {@code null}
	 * @param giveBack what gives back a booking that lands after the call stopped waiting
	 * @return the booking, a refusal when none came in the call's time, or {@code null}
	 * when Redis is judged down (the caller falls back)
	 */
	Booking await(long patience, Booking.Lease slots, Consumer<Booking.Booked> giveBack) {
		long started = System.nanoTime();
		long late = this.redis.patience().toNanos();
		boolean asked = false;
		while (true) {
			long waited = System.nanoTime() - started;
			long step = asked ? Math.min(LATE_STEP, patience - waited) : late - waited;
			try {
				return this.reading.apply(this.answer.get(Math.max(0, step), TimeUnit.NANOSECONDS));
			}
			catch (TimeoutException ex) {
				if (!asked) {
					// late: a ping decides whether Redis is down or slow
					asked = true;
					this.availability.failed(ex);
				}
				if (!this.availability.up()) {
					giveBackWhenAnswered(slots, giveBack);
					return null;
				}
				if (System.nanoTime() - started >= patience) {
					giveBackWhenAnswered(slots, giveBack);
					return new Booking.Unavailable("Redis answered no booking within the call's max-wait");
				}
			}
			catch (ExecutionException ex) {
				// the connection failed: the script may have run all the same
				this.availability.failed((ex.getCause() != null) ? ex.getCause() : ex);
				giveBackWhenAnswered(slots, giveBack);
				return this.availability.up() ? new Booking.Unavailable(String.valueOf(ex.getCause())) : null;
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				giveBackWhenAnswered(slots, giveBack);
				return new Booking.Unavailable("interrupted while waiting for Redis");
			}
		}
	}

	private void giveBackWhenAnswered(Booking.Lease slots, Consumer<Booking.Booked> giveBack) {
		if (slots != null) {
			// after the booking, on the same connection
			this.redis.send(QuotaScript.release(slots, this.redis.time()));
		}
		this.answer.thenAccept((reply) -> {
			try {
				if (this.reading.apply(reply) instanceof Booking.Booked booked) {
					giveBack.accept(booked);
				}
			}
			catch (RuntimeException ex) {
				logger.warn("llm-quota could not give back a booking Redis answered late", ex);
			}
		});
	}

}
