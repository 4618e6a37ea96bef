package dev.llmquota.store;

import java.time.Instant;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import dev.llmquota.store.RedisQuotaStore.OnFailure;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.dao.QueryTimeoutException;

/**
 * Whether Redis answers, as this replica judges it: an error of the connection means it
 * is down; a slow answer may be a pause, so a ping decides. While it is down, a ping now
 * and then looks whether it is back; once it answers, the script is loaded again (a
 * restarted server has none) before the shared books are used.
 */
final class RedisAvailability {

	private static final Log logger = LogFactory.getLog(RedisQuotaStore.class);

	private final RedisQuotaStore.Settings settings;

	private final AtomicLong fallbacks = new AtomicLong();

	private final AtomicBoolean confirming = new AtomicBoolean();

	private volatile Instant downSince;

	private RedisConnection redis;

	private Runnable onDown = () -> {
	};

	RedisAvailability(RedisQuotaStore.Settings settings) {
		this.settings = settings;
	}

	/**
	 * The connection whose answers this judges, and what to do as Redis is judged down,
	 * before any call sees it down; set once, before any answer.
	 */
	void judge(RedisConnection redis, Runnable onDown) {
		this.redis = redis;
		this.onDown = onDown;
	}

	boolean up() {
		return this.downSince == null;
	}

	Instant downSince() {
		return this.downSince;
	}

	long fallbacks() {
		return this.fallbacks.get();
	}

	/** Takes a failed answer. */
	void failed(Throwable error) {
		if (this.downSince != null || this.redis.closed()) {
			return;
		}
		if (error instanceof TimeoutException || error instanceof QueryTimeoutException) {
			if (this.confirming.compareAndSet(false, true)) {
				this.redis.ping().doFinally((signal) -> this.confirming.set(false)).subscribe((pong) -> {
				}, (ignored) -> down(error));
			}
			return;
		}
		down(error);
	}

	private void down(Throwable error) {
		synchronized (this) {
			if (this.downSince != null) {
				return;
			}
			try {
				this.onDown.run();
			}
			catch (RuntimeException ex) {
				logger.warn("llm-quota could not prepare its local books for the fallback", ex);
			}
			this.downSince = Instant.now();
			this.fallbacks.incrementAndGet();
		}
		if (this.settings.onFailure() == OnFailure.LOCAL) {
			logger.warn("Redis does not answer (" + error + "); llm-quota goes on with local books, this replica"
					+ " taking one over the replicas live for each provider entry, at most llm.quota.redis.local-share="
					+ this.settings.localShare() + " of each limit, until Redis answers again");
		}
		else {
			logger.error("Redis does not answer (" + error + "); llm-quota refuses calls"
					+ " (llm.quota.redis.on-failure=reject) until Redis answers again");
		}
	}

	/**
	 * While Redis is down, pings it; when it answers, loads the script, runs
	 * {@code beforeUp} (what must reach Redis before any booking does), then {@code back}
	 * as the shared books are used again (both on Lettuce's thread, so nothing there may
	 * wait for an answer).
	 */
	void lookAgain(Runnable beforeUp, Runnable back) {
		this.redis.ping().subscribe((pong) -> recovered(beforeUp, back), (error) -> {
		});
	}

	private void recovered(Runnable beforeUp, Runnable back) {
		if (this.downSince == null || !this.confirming.compareAndSet(false, true)) {
			return;
		}
		this.redis.scriptLoad(this.settings.timeout())
			.doFinally((signal) -> this.confirming.set(false))
			.subscribe((sha) -> {
				// sent first: a booking waits for the writes sent before it
				beforeUp.run();
				this.downSince = null;
				back.run();
				logger.info("Redis answers again; llm-quota is back on the shared books");
			}, (error) -> {
				// still down: the next tick pings again
			});
	}

}
