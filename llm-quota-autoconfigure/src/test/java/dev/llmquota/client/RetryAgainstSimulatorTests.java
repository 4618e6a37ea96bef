package dev.llmquota.client;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.llmquota.QuotaExhaustedException;
import dev.llmquota.RateLimitedException;
import dev.llmquota.core.PoolStats;
import dev.llmquota.core.QuotaState;
import dev.llmquota.test.simulator.Fault;
import dev.llmquota.test.simulator.RequestRecord;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

/**
 * Type-aware retry against the simulated providers: a rate limit is waited out, a spent
 * quota is never retried, an overload is backed off.
 */
class RetryAgainstSimulatorTests {

	private static final Duration PATIENCE = Duration.ofSeconds(15);

	/** The simulator allows one call a second; llm-quota is told nothing of it. */
	private static SimulatedProvider oneCallASecond(DialectCase dialect, String... properties) {
		return SimulatedProvider.start(dialect, (sim) -> sim.window(Duration.ofSeconds(1))
			.model(SimulatedProvider.MODEL, (limits) -> limits.requestsPerMinute(60)), properties);
	}

	@Test
	void aRateLimitIsRetriedAfterTheAdvertisedWaitAndNotBefore() {
		try (SimulatedProvider provider = oneCallASecond(DialectCase.GEMINI, "llm.quota.max-wait=10s")) {
			assertThat(provider.send(10, "One.").block(PATIENCE)).isNotEmpty();
			assertThat(provider.send(10, "Two.").block(PATIENCE)).isNotEmpty();
			await().atMost(PATIENCE).until(() -> provider.simulator.requestLog().size() == 3);
			List<RequestRecord> log = provider.simulator.requestLog().records();
			assertThat(log).extracting(RequestRecord::outcome)
				.containsExactly(RequestRecord.Outcome.COMPLETED, RequestRecord.Outcome.REFUSED,
						RequestRecord.Outcome.COMPLETED);
			PoolStats.RateLimited answer = provider.pool().stats().lastRateLimit();
			assertThat(answer.dimension()).isEqualTo(dev.llmquota.core.Dimension.REQUESTS_PER_MINUTE);
			assertThat(Duration.between(log.get(1).arrival(), log.get(2).arrival()))
				.isGreaterThanOrEqualTo(answer.delay());
			assertThat(provider.pool().stats().outputSamples()).as("a refusal is not usage").isEqualTo(2);
		}
	}

	@Test
	void callersOfARateLimitedPoolWaitOutThePenaltyInsteadOfStampeding() {
		try (SimulatedProvider provider = oneCallASecond(DialectCase.GEMINI, "llm.quota.max-wait=20s",
				"llm.quota.retry.max-attempts=8")) {
			provider.send(10, "One.").block(PATIENCE);
			CompletableFuture<String> refused = provider.send(10, "Two.").toFuture();
			await().atMost(PATIENCE).until(() -> provider.pool().stats().lastRateLimit() != null);
			assertThat(provider.app.engine().state(provider.pool())).isEqualTo(QuotaState.THROTTLED);
			List<CompletableFuture<String>> others = List.of(provider.send(10, "Three.").toFuture(),
					provider.send(10, "Four.").toFuture());
			assertThat(refused.join()).isNotEmpty();
			others.forEach((call) -> assertThat(call.join()).isNotEmpty());
			await().atMost(PATIENCE)
				.until(() -> provider.simulator.requestLog()
					.records()
					.stream()
					.filter((record) -> record.outcome() == RequestRecord.Outcome.COMPLETED)
					.count() == 4);
			List<RequestRecord> log = provider.simulator.requestLog().records();
			RequestRecord firstRefusal = log.stream()
				.filter((record) -> record.outcome() == RequestRecord.Outcome.REFUSED)
				.findFirst()
				.orElseThrow();
			Duration penalty = Duration.ofSeconds(1).minusMillis(50);
			assertThat(log.subList(log.indexOf(firstRefusal) + 1, log.size()))
				.as("no call reaches the provider before the advertised wait has passed")
				.allSatisfy((record) -> assertThat(Duration.between(firstRefusal.arrival(), record.arrival()))
					.isGreaterThanOrEqualTo(penalty));
		}
	}

	@Test
	void insufficientQuotaReachesTheProviderOnceAndLaterCallsFailFast() {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OPENAI, (sim) -> sim.exhausted(true))) {
			assertThatException().isThrownBy(() -> provider.send(10, "One.").block(PATIENCE))
				.isInstanceOf(QuotaExhaustedException.class)
				.withMessageContaining("provider 'provider'")
				.withMessageContaining("Raise the quota");
			assertThatException().isThrownBy(() -> provider.send(10, "Two.").block(PATIENCE))
				.isInstanceOf(QuotaExhaustedException.class);
			await().atMost(PATIENCE).until(() -> provider.simulator.requestLog().size() == 1);
			assertThat(provider.app.engine().state(provider.pool())).isEqualTo(QuotaState.EXHAUSTED);
			assertThat(retryCounts(provider)).as("with retry, without, failed with, failed without")
				.containsExactly(0L, 0L, 0L, 2L);
		}
	}

	@Test
	void aSpentQuotaReachesTheProviderOnceEvenWithCallersQueuedBehindIt() {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OPENAI, (sim) -> sim.exhausted(true),
				"llm.quota.headroom=1.0", "models.test-model.concurrent-requests=1")) {
			List<CompletableFuture<String>> calls = List.of(provider.send(10, "One.").toFuture(),
					provider.send(10, "Two.").toFuture(), provider.send(10, "Three.").toFuture());
			calls.forEach((call) -> assertThatException().isThrownBy(call::join)
				.withCauseInstanceOf(QuotaExhaustedException.class));
			await().atMost(PATIENCE).until(() -> provider.simulator.requestLog().size() >= 1);
			assertThat(provider.simulator.requestLog().records()).hasSize(1);
		}
	}

	/**
	 * The simulator's Ollama says a spent quota as Ollama's cloud does: 429 "usage limit
	 * reached". Like every other dialect's spent quota, it must reach the provider once
	 * and fail with QuotaExhaustedException, never be retried as a rate limit.
	 */
	@Test
	void ollamaSpentQuotaReachesTheProviderOnceAndFailsAsExhausted() {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OLLAMA, (sim) -> sim.exhausted(true),
				"llm.quota.retry.initial-backoff=50ms")) {
			assertThatException().isThrownBy(() -> provider.send(10, "One.").block(PATIENCE))
				.isInstanceOf(QuotaExhaustedException.class);
			await().atMost(PATIENCE).until(() -> provider.simulator.requestLog().size() >= 1);
			assertThat(provider.simulator.requestLog().records()).hasSize(1);
			assertThat(provider.app.engine().state(provider.pool())).isEqualTo(QuotaState.EXHAUSTED);
		}
	}

	@Test
	void anExhaustedAccountIsProbedAndRecoversWhenTheQuotaIsBack() {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OPENAI, (sim) -> sim.exhausted(true),
				"llm.quota.retry.exhausted-probe-interval=300ms")) {
			assertThatException().isThrownBy(() -> provider.send(10, "One.").block(PATIENCE))
				.isInstanceOf(QuotaExhaustedException.class);
			provider.simulator.exhausted(false);
			await().atMost(PATIENCE)
				.pollInterval(Duration.ofMillis(100))
				.ignoreExceptions()
				.until(() -> provider.send(10, "Probe.").block(PATIENCE) != null);
			assertThat(provider.app.engine().state(provider.pool())).isEqualTo(QuotaState.OK);
		}
	}

	@Test
	void anOverloadIsRetriedWithBackoff() {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.ANTHROPIC, (sim) -> {
		}, "llm.quota.retry.initial-backoff=200ms")) {
			provider.simulator.faults().next(Fault.OVERLOADED);
			assertThat(provider.send(10, "One.").block(PATIENCE)).isNotEmpty();
			await().atMost(PATIENCE).until(() -> provider.simulator.requestLog().size() == 2);
			List<RequestRecord> log = provider.simulator.requestLog().records();
			assertThat(log).extracting(RequestRecord::status).containsExactly(529, 200);
			assertThat(Duration.between(log.get(0).arrival(), log.get(1).arrival()))
				.isGreaterThanOrEqualTo(Duration.ofMillis(200));
			assertThat(provider.app.engine().state(provider.pool())).as("an overload is no penalty")
				.isEqualTo(QuotaState.OK);
			assertThat(provider.app.context()
				.getBean(LlmQuotaCalls.class)
				.retryPolicy()
				.of(SimulatedProvider.PROVIDER)
				.getMetrics()
				.getNumberOfSuccessfulCallsWithRetryAttempt()).as("the entry's retry counted it").isOne();
			assertThat(provider.send(10, "Two.").block(PATIENCE)).isNotEmpty();
			assertThat(retryCounts(provider)).as("with retry, without, failed with, failed without")
				.containsExactly(1L, 1L, 0L, 0L);
		}
	}

	/**
	 * The entry's retry metrics: calls that succeeded with a retry and without, and that
	 * failed with a retry and without.
	 */
	private static List<Long> retryCounts(SimulatedProvider provider) {
		io.github.resilience4j.retry.Retry.Metrics metrics = provider.app.context()
			.getBean(LlmQuotaCalls.class)
			.retryPolicy()
			.of(SimulatedProvider.PROVIDER)
			.getMetrics();
		return List.of(metrics.getNumberOfSuccessfulCallsWithRetryAttempt(),
				metrics.getNumberOfSuccessfulCallsWithoutRetryAttempt(),
				metrics.getNumberOfFailedCallsWithRetryAttempt(), metrics.getNumberOfFailedCallsWithoutRetryAttempt());
	}

	@Test
	void attemptsRunningOutGiveRateLimitedException() {
		try (SimulatedProvider provider = oneCallASecond(DialectCase.GEMINI, "llm.quota.retry.max-attempts=1")) {
			provider.send(10, "One.").block(PATIENCE);
			assertThatException().isThrownBy(() -> provider.send(10, "Two.").block(PATIENCE))
				.isInstanceOf(RateLimitedException.class)
				.withMessageContaining("requests-per-minute")
				.withMessageContaining("max-attempts=1")
				.withMessageContaining("Pace the calls");
			assertThat(retryCounts(provider)).as("with retry, without, failed with, failed without")
				.containsExactly(0L, 1L, 0L, 1L);
		}
	}

	@Test
	void aWaitLongerThanWhatIsLeftOfMaxWaitFailsAtOnce() {
		try (SimulatedProvider provider = oneCallASecond(DialectCase.GEMINI, "llm.quota.max-wait=100ms")) {
			provider.send(10, "One.").block(PATIENCE);
			assertThatException().isThrownBy(() -> provider.send(10, "Two.").block(PATIENCE))
				.isInstanceOf(RateLimitedException.class)
				.withMessageContaining("max-wait");
			await().atMost(PATIENCE).until(() -> provider.simulator.requestLog().size() == 2);
		}
	}

	@Test
	void maxWaitIsOneDeadlineForTheWholeCallAcrossItsAttempts() {
		// llm-quota admits one call per 4 s; the provider one per second, and
		// another team just spent this second's, so the governed call is
		// refused with a wait of about 1 s (the refused attempt keeps its
		// request charged, as OpenAI's would)
		try (SimulatedProvider provider = oneCallASecond(DialectCase.GEMINI, "llm.quota.max-wait=3s",
				"llm.quota.headroom=1.0", "models.test-model.requests-per-minute=15", "charge-refused=requests")) {
			provider.sendOutsideQuota(10, "Another team.").block(PATIENCE);
			long start = System.nanoTime();
			assertThatException().isThrownBy(() -> provider.send(10, "Mine.").block(PATIENCE))
				.isInstanceOf(dev.llmquota.QuotaWaitTimeoutException.class);
			// the retry is not admitted before 4 s: a fresh max-wait per
			// attempt would have admitted it then, past the call's 3 s
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(3_800));
			assertThat(provider.simulator.requestLog().records()).extracting(RequestRecord::outcome)
				.containsExactly(RequestRecord.Outcome.COMPLETED, RequestRecord.Outcome.REFUSED);
		}
	}

}
