package dev.llmquota.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import dev.llmquota.store.LocalQuotaStore;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

import static dev.llmquota.core.Dimension.CONCURRENT_REQUESTS;
import static dev.llmquota.core.Dimension.REQUESTS_PER_MINUTE;
import static dev.llmquota.core.Dimension.TOKENS_PER_MINUTE;
import static dev.llmquota.core.TestConfigs.limits;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Many threads reserving, completing, releasing and cancelling at once.
 */
class ConcurrencyTests {

	@Test
	void manyThreadsLeaveEveryGateAtZeroAndNoBucketAboveCapacity() throws Exception {
		ManualClock clock = new ManualClock();
		QuotaEngine engine = TestConfigs.provider()
			.burstWindow(Duration.ofMinutes(10))
			.maxWait(Duration.ofMinutes(5))
			.account(limits(CONCURRENT_REQUESTS, 6, TOKENS_PER_MINUTE, 100_000_000))
			.model("a", limits(CONCURRENT_REQUESTS, 4, REQUESTS_PER_MINUTE, 1_000_000))
			.model("b", limits(CONCURRENT_REQUESTS, 3, TOKENS_PER_MINUTE, 50_000_000))
			.engine(new LocalQuotaStore(), clock);
		List<Pool> pools = List.of(engine.pool("openai", "a"), engine.pool("openai", "b"));
		int threads = 8;
		int callsPerThread = 2_000;
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		CountDownLatch start = new CountDownLatch(1);
		List<Future<?>> futures = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			futures.add(executor.submit(() -> {
				start.await();
				ThreadLocalRandom random = ThreadLocalRandom.current();
				for (int i = 0; i < callsPerThread; i++) {
					Pool pool = pools.get(random.nextInt(2));
					Demand demand = new Demand(random.nextLong(1_000), random.nextLong(1_000));
					if (random.nextInt(5) == 0) {
						// subscribe and cancel at once: admitted or not, nothing may leak
						Disposable subscription = engine.acquire(pool, demand, null, null)
							.subscribe(QuotaPermit::release);
						subscription.dispose();
						continue;
					}
					QuotaPermit permit = engine.acquire(pool, demand, null, null).block(Duration.ofSeconds(30));
					if (random.nextBoolean()) {
						permit.complete(new Usage(random.nextLong(1_000), 0, random.nextLong(1_000)));
					}
					else {
						permit.release();
					}
				}
				return null;
			}));
		}
		start.countDown();
		for (Future<?> future : futures) {
			future.get(60, TimeUnit.SECONDS);
		}
		executor.shutdown();
		for (Pool pool : pools) {
			PoolSnapshot snapshot = engine.snapshot(pool);
			assertThat(snapshot.gates()).allMatch((gate) -> gate.inUse() == 0);
			assertThat(snapshot.buckets()).allMatch((bucket) -> bucket.remaining() <= bucket.bucket().capacity());
		}
		assertThat(engine.inFlight(pools.get(0).account())).isZero();
		assertThat(engine.waiting(pools.get(0).account())).isZero();
	}

}
