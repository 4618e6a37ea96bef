package dev.llmquota.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import dev.llmquota.LlmQuota;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.PoolSnapshot;
import dev.llmquota.core.PoolStats;
import dev.llmquota.core.Priority;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Interactive and batch calls sharing one pool of a simulated provider: batch saturates
 * the pool, interactive calls still find room at once, batch borrows the interactive
 * reserve while interactive callers are idle, and neither class starves.
 */
class PriorityAgainstSimulatorTests {

	private static final Duration PATIENCE = Duration.ofSeconds(20);

	@Test
	void interactiveCallsFindRoomWhileBatchSaturatesThePoolAndBatchBorrowsTheIdleReserve() {
		// 600 requests per minute at 80%: 8 per second, a bucket of 16 of which batch
		// calls leave 4 (the 0.2 reserve) while interactive calls wait.
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OPENAI,
				(sim) -> sim.window(Duration.ofSeconds(10))
					.model(SimulatedProvider.MODEL,
							(limits) -> limits.requestsPerMinute(600).tokensPerMinute(10_000_000))
					.latency((latency) -> latency.timeToFirstToken(Duration.ofMillis(30)).fixedOutputTokens(5)),
				"models.test-model.requests-per-minute=600", "llm.quota.priority.interactive-reserve=0.2",
				"llm.quota.priority.lend-after=1s", "llm.quota.max-wait=60s", "in-flight-gate=false")) {
			AtomicInteger batchDone = new AtomicInteger();
			AtomicInteger interactiveDone = new AtomicInteger();
			List<Throwable> failures = new ArrayList<>();
			// Batch: 20 workers in a closed loop, far more than the pool admits.
			Disposable batch = Flux.range(0, Integer.MAX_VALUE)
				.flatMap((i) -> call(provider, Priority.BATCH).doOnNext((body) -> batchDone.incrementAndGet()), 20)
				.subscribe(null, failures::add);
			// Interactive: two calls a second for six seconds.
			Flux.interval(Duration.ofMillis(500))
				.take(12)
				.flatMap((i) -> call(provider, Priority.INTERACTIVE)
					.doOnNext((body) -> interactiveDone.incrementAndGet()))
				.blockLast(PATIENCE);
			PoolStats.ClassWaits interactive = provider.pool().stats().waits(Priority.INTERACTIVE);
			int batchDuringInteractive = batchDone.get();
			assertThat(interactiveDone.get()).isEqualTo(12);
			assertThat(Duration.ofNanos(interactive.maxWaitNanos())).as("the longest interactive admission wait")
				.isLessThan(Duration.ofMillis(300));
			assertThat(batchDuringInteractive).as("batch calls in six seconds at about 6 a second left to them")
				.isGreaterThan(20);
			// Interactive callers are idle: after a second the reserve is lent to batch,
			// which then takes the bucket below it, and batch calls go on being admitted
			// (the bucket may be below the reserve at once, from the last interactive
			// calls: both are awaited, not one after the other)
			long admittedDuringInteractive = provider.pool().stats().waits(Priority.BATCH).admitted();
			await().atMost(PATIENCE)
				.until(() -> requestsRemaining(provider.snapshot()) < 4
						&& provider.pool().stats().waits(Priority.BATCH).admitted() > admittedDuringInteractive);
			batch.dispose();
			assertThat(failures).isEmpty();
			assertThat(provider.simulator.requestLog().refused()).as("provider refusals").isEmpty();
		}
	}

	private static Mono<String> call(SimulatedProvider provider, Priority priority) {
		return provider.call(20, false, "Summarise this.")
			.attribute(LlmQuota.PRIORITY, priority)
			.retrieve()
			.bodyToMono(String.class);
	}

	private static long requestsRemaining(PoolSnapshot snapshot) {
		return snapshot.buckets()
			.stream()
			.filter((bucket) -> bucket.bucket().scope() == BucketSpec.Scope.POOL
					&& bucket.bucket().dimension() == Dimension.REQUESTS_PER_MINUTE)
			.mapToLong(PoolSnapshot.BucketSnapshot::remaining)
			.findFirst()
			.orElseThrow();
	}

}
