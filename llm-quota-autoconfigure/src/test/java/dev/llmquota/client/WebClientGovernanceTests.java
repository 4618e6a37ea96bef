package dev.llmquota.client;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.llmquota.LlmQuota;
import dev.llmquota.QuotaWaitTimeoutException;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.Dimension;
import dev.llmquota.test.simulator.RequestRecord;
import dev.llmquota.test.simulator.clock.ManualSimClock;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A Spring Boot application with only the starter and properties, calling the simulated
 * provider of every dialect through the auto-configured {@code WebClient.Builder}.
 */
class WebClientGovernanceTests {

	private static final Duration PATIENCE = Duration.ofSeconds(10);

	@ParameterizedTest
	@EnumSource(DialectCase.class)
	void reservesTheOutputCeilingDuringTheCallAndRefundsItAfter(DialectCase dialect) throws Exception {
		try (SimulatedProvider provider = SimulatedProvider.start(dialect,
				(sim) -> sim
					.latency((latency) -> latency.timeToFirstToken(Duration.ofMillis(400)).fixedOutputTokens(20)),
				"llm.quota.headroom=1.0", "reserve-max-tokens=true", "burst-window=60s",
				"models.test-model.output-tokens-per-minute=6000")) {
			CompletableFuture<String> answer = provider.send(4_000, "Summarise the quarter.").toFuture();
			await().atMost(PATIENCE).until(() -> provider.inFlight() == 1);
			assertThat(outputRemaining(provider)).as("4,000 reserved of 6,000").isLessThan(2_500);
			assertThat(answer.get(10, TimeUnit.SECONDS)).isNotEmpty();
			await().atMost(PATIENCE).until(() -> provider.inFlight() == 0);
			assertThat(outputRemaining(provider)).as("the unused 3,980 refunded").isGreaterThan(5_500);
		}
	}

	@ParameterizedTest
	@EnumSource(DialectCase.class)
	void fiftyCallersOfferingThreeTimesTheQuotaMeetNoRefusal(DialectCase dialect) {
		try (SimulatedProvider provider = SimulatedProvider.start(dialect,
				(sim) -> sim.window(Duration.ofSeconds(5))
					.model(SimulatedProvider.MODEL, (limits) -> limits.requestsPerMinute(240).tokensPerMinute(24_000))
					.latency((latency) -> latency.timeToFirstToken(Duration.ofMillis(50)).fixedOutputTokens(20)),
				"reserve-max-tokens=true", "models.test-model.requests-per-minute=240",
				"models.test-model.tokens-per-minute=24000", "llm.quota.max-wait=600ms")) {
			// About six calls fit at once and two more in the 600 ms the others may wait;
			// eighteen are offered, fifty at a time.
			AtomicInteger completed = new AtomicInteger();
			ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
			Flux.range(0, 18)
				.flatMap((i) -> provider.send(100, SimulatedProvider.words(20))
					.doOnNext((body) -> completed.incrementAndGet())
					.onErrorResume((ex) -> {
						failures.add(ex);
						return Mono.empty();
					}), 50)
				.blockLast(PATIENCE.multipliedBy(2));
			assertThat(provider.simulator.requestLog().refused()).as("provider refusals").isEmpty();
			assertThat(completed.get()).isGreaterThanOrEqualTo(3);
			assertThat(failures).allSatisfy((ex) -> assertThat(ex).isInstanceOf(QuotaWaitTimeoutException.class));
			assertThat(completed.get() + failures.size()).isEqualTo(18);
		}
	}

	@ParameterizedTest
	@EnumSource(value = DialectCase.class, names = "BEDROCK", mode = EnumSource.Mode.EXCLUDE)
	void aStreamHoldsItsConcurrencySlotUntilItsLastByte(DialectCase dialect) {
		try (SimulatedProvider provider = SimulatedProvider.start(dialect,
				(sim) -> sim.model(SimulatedProvider.MODEL, (limits) -> limits.concurrentRequests(1))
					.latency((latency) -> latency.timeToFirstToken(Duration.ofMillis(100))
						.perOutputToken(Duration.ofMillis(20))
						.fixedOutputTokens(20)),
				"llm.quota.headroom=1.0", "models.test-model.concurrent-requests=1")) {
			CompletableFuture<List<String>> first = provider.stream(100, "Tell a story.").collectList().toFuture();
			await().atMost(PATIENCE).until(() -> provider.inFlight() == 1);
			CompletableFuture<List<String>> second = provider.stream(100, "Tell another.").collectList().toFuture();
			await().atMost(PATIENCE).until(() -> provider.waiting() == 1);
			assertThat(first.join()).isNotEmpty();
			assertThat(second.join()).isNotEmpty();
			assertThat(provider.simulator.requestLog().refused()).as("the provider allows one stream at a time")
				.isEmpty();
			await().atMost(PATIENCE).until(() -> provider.inFlight() == 0);
		}
	}

	/**
	 * A subscriber that cancels as soon as it has the stream's last event (as one taking
	 * events until {@code [DONE]} does): the stream was answered in full and is charged
	 * what it reported.
	 */
	@ParameterizedTest
	@EnumSource(value = DialectCase.class, names = { "OPENAI", "AZURE_OPENAI", "ANTHROPIC", "OLLAMA" })
	void aStreamCancelledOnItsLastEventIsChargedItsReportedUsage(DialectCase dialect) {
		try (SimulatedProvider provider = SimulatedProvider.start(dialect,
				(sim) -> sim.latency((latency) -> latency.fixedOutputTokens(20)), "llm.quota.headroom=1.0")) {
			assertThat(
					provider.stream(1_000, "Tell a story.").takeUntil(dialect::lastEvent).collectList().block(PATIENCE))
				.last()
				.matches(dialect::lastEvent);
			await().atMost(PATIENCE).until(() -> provider.inFlight() == 0);
			assertThat(provider.pool().stats().outputSamples()).as("its usage reached the books").isEqualTo(1);
			assertThat(provider.pool().stats().billedOutput()).isEqualTo(20);
		}
	}

	@ParameterizedTest
	@EnumSource(value = DialectCase.class, names = "BEDROCK", mode = EnumSource.Mode.EXCLUDE)
	void cancellingMidStreamReleasesTheSlot(DialectCase dialect) {
		try (SimulatedProvider provider = SimulatedProvider.start(dialect,
				(sim) -> sim.latency((latency) -> latency.timeToFirstToken(Duration.ofMillis(50))
					.perOutputToken(Duration.ofMillis(50))
					.fixedOutputTokens(40)),
				"llm.quota.headroom=1.0", "models.test-model.concurrent-requests=1")) {
			AtomicInteger chunks = new AtomicInteger();
			Disposable reading = provider.stream(100, "Tell a long story.")
				.subscribe((chunk) -> chunks.incrementAndGet());
			await().atMost(PATIENCE).until(() -> chunks.get() > 0);
			reading.dispose();
			await().atMost(PATIENCE).until(() -> provider.inFlight() == 0);
			assertThat(provider.stream(10, "Short one.").collectList().block(PATIENCE)).isNotEmpty();
		}
	}

	@ParameterizedTest
	@EnumSource(value = DialectCase.class, names = { "OPENAI", "AZURE_OPENAI", "ANTHROPIC" })
	void aProviderReportingLessRemainingLowersTheBooksAndNoRefusalFollows(DialectCase dialect) {
		ManualSimClock frozen = new ManualSimClock();
		try (SimulatedProvider provider = SimulatedProvider.start(dialect, (sim) -> sim.clock(frozen)
			.model(SimulatedProvider.MODEL, (limits) -> limits.tokensPerMinute(6_000).inputTokensPerMinute(6_000)),
				"llm.quota.headroom=0.8", "reserve-max-tokens=true", "models.test-model.tokens-per-minute=6000",
				"models.test-model.input-tokens-per-minute=6000", "llm.quota.max-wait=300ms")) {
			// Another team spends most of the account; the provider's clock stands still,
			// so nothing refills.
			while (provider.simulator.remaining(SimulatedProvider.MODEL,
					dev.llmquota.test.simulator.quota.Dimension.TOKENS_PER_MINUTE) > 1_500) {
				provider.sendOutsideQuota(1, SimulatedProvider.words(400)).block();
			}
			assertThat(provider.send(50, "Hello.").block(PATIENCE)).isNotEmpty();
			long local = provider.snapshot().bucket(BucketSpec.Scope.POOL, Dimension.TOKENS_PER_MINUTE).remaining();
			assertThat(local).as("lowered to remaining - 20% of the limit").isNegative();
			for (int i = 0; i < 3; i++) {
				provider.send(50, "Hello again.")
					.onErrorResume(QuotaWaitTimeoutException.class, (ex) -> Mono.empty())
					.block(PATIENCE);
			}
			assertThat(provider.simulator.requestLog().refused()).isEmpty();
			assertThat(provider.pool().serverLimits()).containsKey(Dimension.TOKENS_PER_MINUTE);
		}
	}

	@ParameterizedTest
	@EnumSource(value = DialectCase.class, names = { "OPENAI", "ANTHROPIC" })
	void aLimitNobodyConfiguredIsLearnedFromTheHeadersAndEnforced(DialectCase dialect) {
		try (SimulatedProvider provider = SimulatedProvider.start(dialect,
				(sim) -> sim.model(SimulatedProvider.MODEL, (limits) -> limits.requestsPerMinute(30)),
				"llm.quota.headroom=1.0", "llm.quota.max-wait=0s")) {
			assertThat(provider.send(10, "One.").block(PATIENCE)).isNotEmpty();
			assertThat(provider.pool().learned(Dimension.REQUESTS_PER_MINUTE)).isTrue();
			assertThat(provider.pool().limits().asMap()).containsEntry(Dimension.REQUESTS_PER_MINUTE, 30L);
			// The learned bucket holds 2 s of 30 a minute: one more call now, then one
			// every 2 s.
			List<String> next = Flux.range(0, 2)
				.concatMap((i) -> provider.send(10, "Again.")
					.map((body) -> "sent")
					.onErrorResume(QuotaWaitTimeoutException.class, (ex) -> Mono.just("waited")))
				.collectList()
				.block(PATIENCE);
			assertThat(next).containsExactly("sent", "waited");
		}
	}

	@ParameterizedTest
	@EnumSource(value = DialectCase.class, names = { "OPENAI" })
	void theSkipAttributeLeavesACallUngoverned(DialectCase dialect) {
		try (SimulatedProvider provider = SimulatedProvider.start(dialect, (sim) -> {
		}, "models.test-model.requests-per-minute=1", "llm.quota.max-wait=0s")) {
			for (int i = 0; i < 3; i++) {
				assertThat(provider.call(10, false, "Hi.")
					.attribute(LlmQuota.SKIP, true)
					.retrieve()
					.bodyToMono(String.class)
					.block(PATIENCE)).isNotEmpty();
			}
			assertThat(provider.simulator.requestLog().records()).extracting(RequestRecord::status).containsOnly(200);
		}
	}

	private static long outputRemaining(SimulatedProvider provider) {
		return provider.snapshot().bucket(BucketSpec.Scope.POOL, Dimension.OUTPUT_TOKENS_PER_MINUTE).remaining();
	}

}
