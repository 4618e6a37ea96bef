package dev.llmquota.client;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

import io.github.resilience4j.core.functions.CheckedSupplier;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilience4j.retry.RetryRegistry;
import reactor.core.publisher.Mono;

/**
 * The one retry policy of every adapter, reactive and blocking, on Resilience4j: one
 * {@link RetryRegistry} with one named instance per provider entry, configured once from
 * {@code llm.quota.retry.*}. What is retried, and after how long, is decided by
 * {@link RefusalHandling} for each answer (the provider's wait, or the back-off); an
 * attempt to retry says so with {@link RetryAfter}, and the interval is that wait. Each
 * retry goes through admission again.
 */
public final class RetryPolicy {

	private final RetryRegistry registry;

	/**
	 * Creates the policy.
	 * @param settings how refusals are retried
	 */
	public RetryPolicy(RetrySettings settings) {
		RetryConfig config = RetryConfig.custom()
			.maxAttempts(settings.maxAttempts())
			.retryOnException(RetryAfter.class::isInstance)
			.intervalBiFunction((attempt, result) -> (result.isLeft() && result.getLeft() instanceof RetryAfter after)
					? after.wait.toMillis() : 0L)
			.build();
		this.registry = RetryRegistry.of(config);
	}

	/**
	 * Returns the registry, one retry instance per provider entry, named by its id: for
	 * its event publishers and metrics.
	 * @return the registry
	 */
	public RetryRegistry registry() {
		return this.registry;
	}

	/**
	 * Returns the retry of a provider entry.
	 * @param provider the entry's id
	 * @return its retry
	 */
	public Retry of(String provider) {
		return this.registry.retry(provider);
	}

	/**
	 * Retries a reactive call's attempts. A retry that is not counted (a route moving a
	 * call off a spent target) runs the same attempt number again, at once. The attempts
	 * run under the entry's Resilience4j retry as its reactor operator runs them (its
	 * context decides each wait and keeps the metrics and events), without that
	 * operator's {@code retryWhen}, which builds a companion sink for every call although
	 * most calls end in their first attempt.
	 * @param <T> the answer's type
	 * @param plan the call's plan: its retry is its entry's, or its route's
	 * @param attempt the attempt of a number, from 1, subscribed once each
	 * @return the call
	 */
	public <T> Mono<T> reactive(CallPlan plan, IntFunction<Mono<T>> attempt) {
		Retry retry = of(plan.retryName());
		IntFunction<Mono<T>> moving = !plan.routed() ? attempt
				// only a route's call moves on
				: (number) -> Mono.defer(() -> attempt.apply(number))
					.retryWhen(reactor.util.retry.Retry.max(plan.moves())
						.filter((ex) -> movesOn(ex) && plan.mayMove())
						.onRetryExhaustedThrow((spec, signal) -> noMoveLeft((RetryAfter) signal.failure())))
					// a move with no target left to move to
					.onErrorMap(RetryPolicy::movesOn, (ex) -> noMoveLeft((RetryAfter) ex));
		return Mono.defer(() -> attempt(retry, moving, 1, null));
	}

	/**
	 * An attempt and, when it is refused and Resilience4j's context allows, the next one
	 * after the wait the context gives; the context is made on a call's first end.
	 */
	private static <T> Mono<T> attempt(Retry retry, IntFunction<Mono<T>> attempt, int number,
			Retry.AsyncContext<T> started) {
		return attempt.apply(number)
			.doOnSuccess((answer) -> context(retry, started).onComplete())
			.onErrorResume((ex) -> {
				Retry.AsyncContext<T> context = context(retry, started);
				long wait = context.onError(ex);
				if (wait < 0) {
					return Mono.error(ex);
				}
				return Mono.delay(Duration.ofMillis(wait))
					.then(Mono.defer(() -> RetryPolicy.attempt(retry, attempt, number + 1, context)));
			});
	}

	private static <T> Retry.AsyncContext<T> context(Retry retry, Retry.AsyncContext<T> started) {
		return (started != null) ? started : retry.asyncContext();
	}

	/**
	 * Retries a blocking call's attempts; the thread parks between them, holding no lock.
	 * A retry that is not counted runs the same attempt number again, at once.
	 * @param <R> the answer's type
	 * @param plan the call's plan: its retry is its entry's, or its route's
	 * @param attempt the attempt of a number, from 1
	 * @return the answer of the last attempt
	 * @throws IOException if an attempt got no answer
	 */
	public <R> R blocking(CallPlan plan, Attempt<R> attempt) throws IOException {
		AtomicInteger attempts = new AtomicInteger();
		CheckedSupplier<R> counted = () -> {
			int number = attempts.incrementAndGet();
			for (int moves = 0;; moves++) {
				try {
					return attempt.run(number);
				}
				catch (RetryAfter ex) {
					if (!movesOn(ex)) {
						throw ex;
					}
					if (moves >= plan.moves() || !plan.mayMove()) {
						throw noMoveLeft(ex);
					}
				}
			}
		};
		try {
			return Retry.decorateCheckedSupplier(of(plan.retryName()), counted).get();
		}
		catch (RetryAfter ex) {
			if (!Thread.currentThread().isInterrupted()) {
				throw new IllegalStateException("A retry llm-quota asked for was not made", ex);
			}
			// Resilience4j ends a wait that is interrupted by throwing the last attempt's
			// failure, this signal, with the thread's interrupt kept: the caller is told
			// in Java's words, as a blocking read interrupted is
			InterruptedIOException interrupted = new InterruptedIOException(
					"Interrupted while waiting " + ex.wait + " to retry a call llm-quota governs");
			interrupted.initCause(ex.failure);
			throw interrupted;
		}
		catch (IOException | RuntimeException | Error ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static boolean movesOn(Throwable ex) {
		return ex instanceof RetryAfter after && !after.counted;
	}

	/**
	 * What a call that may move no more fails with: the contract exception the last
	 * target's answer called for, never the signal itself (Resilience4j would count it as
	 * an attempt to retry, and the caller would get it).
	 */
	private static RuntimeException noMoveLeft(RetryAfter move) {
		return (move.failure != null) ? move.failure : new IllegalStateException("A route's move named no failure");
	}

	/**
	 * One attempt of a blocking call.
	 *
	 * @param <R> the answer's type
	 */
	@FunctionalInterface
	public interface Attempt<R> {

		/**
		 * Runs the attempt.
		 * @param number its number, from 1
		 * @return the answer
		 * @throws IOException if it got no answer
		 */
		R run(int number) throws IOException;

	}

	/**
	 * An attempt to be retried after a wait; never leaves the adapters, since the last
	 * attempt is failed or handed on, not retried.
	 */
	public static final class RetryAfter extends RuntimeException {

		private final Duration wait;

		private final boolean counted;

		private final RuntimeException failure;

		/**
		 * An attempt to retry.
		 * @param wait how long to wait before the next attempt
		 */
		public RetryAfter(Duration wait) {
			this(wait, true, null);
		}

		private RetryAfter(Duration wait, boolean counted, RuntimeException failure) {
			super("retry after " + wait, null, false, false);
			this.wait = wait;
			this.counted = counted;
			this.failure = failure;
		}

		/**
		 * The retry an outcome asks for.
		 * @param outcome a {@link Outcome.Action#RETRY} outcome
		 * @return the retry
		 */
		public static RetryAfter of(Outcome outcome) {
			return new RetryAfter(outcome.delay(), outcome.counted(), outcome.failure());
		}

	}

}
