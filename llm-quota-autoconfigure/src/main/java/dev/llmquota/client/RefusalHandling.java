package dev.llmquota.client;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ThreadLocalRandom;

import dev.llmquota.DurationText;
import dev.llmquota.QuotaExhaustedException;
import dev.llmquota.RateLimitedException;
import dev.llmquota.core.Mode;
import dev.llmquota.core.Pool;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.provider.Answer;
import dev.llmquota.provider.HeaderLookup;
import dev.llmquota.provider.LogOnce;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * What a refusal leads to, the same for every HTTP stack: classified by its dialect,
 * taken into the books (penalty or exhaustion), then retried, failed or handed on.
 */
final class RefusalHandling {

	private static final Log logger = LogFactory.getLog(RefusalHandling.class);

	private static final JsonMapper mapper = JsonMapper.shared();

	private final QuotaEngine engine;

	private final RetrySettings retry;

	RefusalHandling(QuotaEngine engine, RetrySettings retry) {
		this.engine = engine;
		this.retry = retry;
	}

	/**
	 * Decides what an attempt's refusal or failure calls for, and takes it into the
	 * books: a rate limit holds the pool for the provider's wait, a spent quota marks the
	 * pool (or account) exhausted. Only answers of status 400 and above need deciding.
	 * @param call the attempt
	 * @param status the HTTP status
	 * @param headers the answer's headers
	 * @param body the answer's body
	 * @param attempt the attempt's number, from 1
	 * @param deadline the monotonic time by which the call must be admitted, from its
	 * {@code max-wait}
	 * @return what to do
	 */
	Outcome answered(GovernedCall call, int status, HeaderLookup headers, byte[] body, int attempt, long deadline) {
		CallPlan plan = call.plan();
		Instant now = this.engine.clock().instant();
		Answer answer;
		try {
			answer = plan.dialect().classify(status, headers, parseQuietly(body), now);
		}
		catch (RuntimeException ex) {
			LogOnce.warn(plan.dialect().id().id() + ": unreadable refusal", "llm-quota could not read a " + status
					+ " answer (" + ex.getMessage() + "); it is treated by its status");
			answer = plan.dialect().classify(status, headers, null, now);
		}
		return answered(call, answer, status, headers, attempt, deadline);
	}

	/**
	 * Decides what a refusal already classified calls for, and takes it into the books: a
	 * refusal that came inside a stream after a 200, as OpenAI's Responses API sends one.
	 * @param call the attempt
	 * @param answer what the refusal means
	 * @param status the HTTP status the answer came with
	 * @param headers the answer's headers
	 * @param attempt the attempt's number, from 1
	 * @param deadline the monotonic time by which the call must be admitted
	 * @return what to do
	 */
	Outcome answered(GovernedCall call, Answer answer, int status, HeaderLookup headers, int attempt, long deadline) {
		Outcome outcome = decide(call, answer, status, headers, attempt, deadline);
		// Shadow mode takes the answer into the books and reports it, but the caller gets
		// the provider's answer as it came: nothing is retried or failed in its place.
		return (call.plan().pool().spec().mode() == Mode.ENFORCE) ? outcome : Outcome.pass();
	}

	private Outcome decide(GovernedCall call, Answer classified, int status, HeaderLookup headers, int attempt,
			long deadline) {
		CallPlan plan = call.plan();
		Pool pool = plan.pool();
		Instant now = this.engine.clock().instant();
		Answer answer = classified.withThreshold(this.retry.exhaustedThreshold());
		String dimension = (answer.dimension() != null) ? answer.dimension().id() : null;
		switch (answer.kind()) {
			case EXHAUSTED -> {
				this.engine.exhaust(pool, answer.wholeAccount(), answer.dimension(), reason(answer, status),
						answer.reset(now));
				logger.warn("Provider '" + pool.provider() + "' says a quota is spent for model '" + pool.model()
						+ "' (" + reason(answer, status) + "); calls "
						+ ((pool.spec().mode() == Mode.ENFORCE) ? "fail fast" : "would fail fast (shadow mode)")
						+ " until it is back");
				QuotaExhaustedException spent = new QuotaExhaustedException(pool.provider(), pool.region(),
						pool.model(), dimension, reason(answer, status), answer.reset(now));
				if (plan.routed()) {
					// the route's other targets may have quota: the call moves on
					plan.route().refused(true);
					return Outcome.moveOn(spent);
				}
				return Outcome.fail(spent);
			}
			case RATE_LIMITED -> {
				Duration wait = waitOf(answer, attempt);
				this.engine.rateLimited(pool, answer.dimension(), wait);
				if (plan.routed()) {
					plan.route().refused(false);
				}
				logger.warn("Provider '" + pool.provider() + "' rate-limited model '" + pool.model() + "' on "
						+ ((dimension != null) ? dimension : "an unknown dimension") + ", wait " + DurationText.of(wait)
						+ "; headers: " + plan.dialect().rateLimits(headers, now));
				if (!answer.retryAllowed()) {
					return Outcome.pass();
				}
				if (plan.routed() && attempt < this.retry.maxAttempts()) {
					// re-admitted on the route at once: the target free first,
					// which may be this one once its wait is over (the penalty
					// is in its books)
					return Outcome.retry(Duration.ZERO);
				}
				Duration room = room(deadline);
				if (wait.compareTo(room) > 0) {
					return Outcome
						.fail(new RateLimitedException(pool.provider(), pool.region(), pool.model(), dimension, wait,
								"its wait exceeds llm.quota.retry.max-backoff or what is left of the call's max-wait"));
				}
				if (attempt >= this.retry.maxAttempts()) {
					return Outcome
						.fail(new RateLimitedException(pool.provider(), pool.region(), pool.model(), dimension, wait,
								"no attempt is left of llm.quota.retry.max-attempts=" + this.retry.maxAttempts()));
				}
				return Outcome.retry(jitter(wait, room, named(answer)));
			}
			case OVERLOADED -> {
				if (!answer.retryAllowed() || attempt >= this.retry.maxAttempts()) {
					return Outcome.pass();
				}
				Duration wait = waitOf(answer, attempt);
				Duration room = room(deadline);
				return (wait.compareTo(room) <= 0) ? Outcome.retry(jitter(wait, room, named(answer))) : Outcome.pass();
			}
			default -> {
				return Outcome.pass();
			}
		}
	}

	private static String reason(Answer answer, int status) {
		return (answer.reason() != null) ? answer.reason() : "HTTP " + status;
	}

	/**
	 * The wait the answer names; else, or for a wait of nothing ({@code retry-after: 0},
	 * a date past: the limit it speaks of is spent now, so an attempt at once is refused
	 * again), the backoff.
	 */
	private Duration waitOf(Answer answer, int attempt) {
		Duration named = answer.delay();
		return (named != null && named.compareTo(Duration.ZERO) > 0) ? named : backoff(attempt);
	}

	/**
	 * Exponential backoff from the initial one, capped, for answers that name no wait.
	 */
	private Duration backoff(int attempt) {
		long initial = this.retry.initialBackoff().toMillis();
		long millis = initial << Math.min(16, Math.max(0, attempt - 1));
		return Duration.ofMillis(Math.min(millis, this.retry.maxBackoff().toMillis()));
	}

	/**
	 * The longest a call may sleep before its next attempt: {@code retry.max-backoff}, or
	 * what is left of its {@code max-wait} if that is less.
	 */
	private Duration room(long deadline) {
		Duration left = Duration.ofNanos(Math.max(0, deadline - this.engine.clock().nanoTime()));
		return (left.compareTo(this.retry.maxBackoff()) < 0) ? left : this.retry.maxBackoff();
	}

	/**
	 * Whether the answer named its wait (which a call never goes before), rather than
	 * leaving llm-quota its back-off.
	 */
	private static boolean named(Answer answer) {
		return answer.delay() != null && answer.delay().compareTo(Duration.ZERO) > 0;
	}

	/**
	 * Up to a tenth more (at least 50 ms), so callers held together do not return
	 * together; never more than the room the call has. A back-off of llm-quota's own may
	 * go as much earlier where the room leaves no later (at max-backoff, or at the end of
	 * the call's max-wait); a wait the provider named never does.
	 */
	private static Duration jitter(Duration wait, Duration room, boolean named) {
		long millis = wait.toMillis();
		long spread = Math.max(50, millis / 10);
		long high = Math.min(millis + spread, room.toMillis());
		// later, as far as the room allows; a back-off with no room later goes earlier
		long low = (named || high - millis >= spread) ? millis : Math.max(0, high - spread);
		return (high > low) ? Duration.ofMillis(low + ThreadLocalRandom.current().nextLong(high - low + 1))
				: ((wait.compareTo(room) < 0) ? wait : room);
	}

	private static JsonNode parseQuietly(byte[] body) {
		if (body == null || body.length == 0) {
			return null;
		}
		try {
			return mapper.readTree(body);
		}
		catch (JacksonException ex) {
			// a proxy's HTML page, a body cut short: classified by status and headers
			LogOnce.warn("unreadable refusal", "llm-quota could not read a refusal's body as JSON ("
					+ ex.getOriginalMessage() + "); it classifies the refusal by its status and headers");
			return null;
		}
	}

}
