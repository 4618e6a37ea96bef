package dev.llmquota.client;

import java.io.IOException;
import java.time.Duration;

import io.github.resilience4j.core.functions.CheckedSupplier;
import io.github.resilience4j.reactor.retry.RetryOperator;
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
	 * Retries a reactive call's attempts.
	 * @param <T> the answer's type
	 * @param provider the entry's id
	 * @param attempts the attempts, subscribed once each
	 * @return the call
	 */
	public <T> Mono<T> reactive(String provider, Mono<T> attempts) {
		return attempts.transformDeferred(RetryOperator.of(of(provider)));
	}

	/**
	 * Retries a blocking call's attempts; the thread parks between them, holding no lock.
	 * @param <R> the answer's type
	 * @param provider the entry's id
	 * @param attempt one attempt
	 * @return the answer of the last attempt
	 * @throws IOException if an attempt got no answer
	 */
	public <R> R blocking(String provider, CheckedSupplier<R> attempt) throws IOException {
		try {
			return Retry.decorateCheckedSupplier(of(provider), attempt).get();
		}
		catch (IOException | RuntimeException | Error ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * An attempt to be retried after a wait; never leaves the adapters, since the last
	 * attempt is failed or handed on, not retried.
	 */
	public static final class RetryAfter extends RuntimeException {

		private final Duration wait;

		/**
		 * An attempt to retry.
		 * @param wait how long to wait before the next attempt
		 */
		public RetryAfter(Duration wait) {
			super("retry after " + wait, null, false, false);
			this.wait = wait;
		}

	}

}
