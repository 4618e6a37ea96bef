package dev.llmquota.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import dev.llmquota.core.kernel.Arith;
import dev.llmquota.store.LocalQuotaStore;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random traffic through one account with two pools, checked against the bounds a
 * provider enforces: no bucket above capacity, no window charged beyond capacity + rate x
 * W, no gate above capacity, and every gate back at zero when the calls end.
 */
class PoolPropertyTests {

	@ParameterizedTest(name = "seed {0}")
	@MethodSource("dev.llmquota.core.Seeds#seeds")
	void randomTrafficStaysWithinEveryBucketAndGate(long seed) {
		SplittableRandom random = new SplittableRandom(seed);
		ManualClock clock = new ManualClock();
		RecordingStore store = new RecordingStore(new LocalQuotaStore());
		TestConfigs configs = TestConfigs.provider()
			.headroom(0.5 + random.nextInt(51) / 100.0)
			.burstWindow(Duration.ofMillis(500 + random.nextInt(10_000)))
			.expectedLatency(Duration.ofMillis(200 + random.nextInt(3_000)))
			.inFlightGate(random.nextBoolean())
			.accounting(new Accounting(random.nextBoolean(), random.nextBoolean(), random.nextBoolean(),
					1 + random.nextInt(3)))
			.account(randomLimits(random))
			.model("a", randomLimits(random))
			.model("b", randomLimits(random), Priority.BATCH);
		QuotaEngine engine = configs.engine(store, clock);
		List<Pool> pools = List.of(engine.pool("openai", "a"), engine.pool("openai", "b"));
		List<Calls.Call> all = new ArrayList<>();
		List<Calls.Call> waiting = new ArrayList<>();
		List<Calls.Call> admitted = new ArrayList<>();
		for (int step = 0; step < 300; step++) {
			int op = random.nextInt(10);
			if (op < 4) {
				Pool pool = pools.get(random.nextInt(2));
				Demand demand = new Demand(random.nextLong(3_000), random.nextLong(2_000));
				Priority priority = random.nextBoolean() ? Priority.BATCH : null;
				Calls.Call call = Calls.acquire(engine, pool, demand, priority,
						Duration.ofMillis(random.nextInt(20_000)));
				waiting.add(call);
				all.add(call);
			}
			else if (op < 6 && !admitted.isEmpty()) {
				QuotaPermit permit = admitted.remove(random.nextInt(admitted.size())).permit();
				long input = Math.max(0, permit.demand().inputTokens() + random.nextLong(-500, 500));
				long output = random.nextLong(permit.demand().outputCeiling() + 50);
				permit.complete(new Usage(input, random.nextLong(input + 1), output));
			}
			else if (op < 7 && !admitted.isEmpty()) {
				admitted.remove(random.nextInt(admitted.size())).permit().release();
			}
			else if (op < 8 && !waiting.isEmpty()) {
				waiting.get(random.nextInt(waiting.size())).cancel();
			}
			else {
				clock.advance(Duration.ofMillis(random.nextInt(3_000)));
			}
			for (Calls.Call call : List.copyOf(waiting)) {
				if (call.admitted() && !call.permit().isReleased()) {
					waiting.remove(call);
					admitted.add(call);
				}
				else if (call.error() != null || (call.admitted() && call.permit().isReleased())) {
					waiting.remove(call);
				}
			}
			assertInvariants(seed, step, engine, pools);
		}
		// Leave the queue first, so that releases admit nothing new; then end every call.
		all.forEach(Calls.Call::cancel);
		all.stream().filter(Calls.Call::admitted).forEach((call) -> call.permit().release());
		for (Pool pool : pools) {
			assertThat(engine.snapshot(pool).gates()).as("seed %d: gates empty at the end", seed)
				.allMatch((gate) -> gate.inUse() == 0);
		}
		assertWindowBounds(seed, store);
	}

	private static Limits randomLimits(SplittableRandom random) {
		Map<Dimension, Long> limits = new LinkedHashMap<>();
		for (Dimension dimension : Dimension.values()) {
			if (random.nextInt(3) == 0) {
				long limit = switch (dimension) {
					case REQUESTS_PER_MINUTE -> 10 + random.nextInt(1_000);
					case CONCURRENT_REQUESTS -> 1 + random.nextInt(20);
					case REQUESTS_PER_DAY -> 5 + random.nextInt(500);
					default -> 1_000 + random.nextLong(500_000);
				};
				limits.put(dimension, limit);
			}
		}
		return Limits.of(limits);
	}

	private static void assertInvariants(long seed, int step, QuotaEngine engine, List<Pool> pools) {
		for (Pool pool : pools) {
			PoolSnapshot snapshot = engine.snapshot(pool);
			for (PoolSnapshot.BucketSnapshot bucket : snapshot.buckets()) {
				assertThat(bucket.remaining())
					.as("seed %d step %d: %s within capacity", seed, step, bucket.bucket().key())
					.isLessThanOrEqualTo(bucket.bucket().capacity());
			}
			for (PoolSnapshot.GateSnapshot gate : snapshot.gates()) {
				assertThat(gate.inUse()).as("seed %d step %d: gate %s", seed, step, gate).isNotNegative();
				if (!gate.derived()) {
					assertThat(gate.inUse()).as("seed %d step %d: gate %s", seed, step, gate)
						.isLessThanOrEqualTo(gate.capacity());
				}
			}
		}
	}

	/**
	 * Over any window ending at an admission that was not oversized, the units taken (net
	 * of refunds) never exceed capacity + rate x W: the level checked at that admission
	 * covers everything charged before it, corrections included.
	 */
	private static void assertWindowBounds(long seed, RecordingStore store) {
		store.entries().forEach((bucket, entries) -> {
			if (bucket.daily()) {
				// The whole run falls in one day: at each admission, everything taken so
				// far fits the limit.
				long taken = 0;
				for (RecordingStore.Entry entry : entries) {
					taken += entry.units();
					if (entry.admission() && entry.units() <= bucket.enforced()) {
						assertThat(taken).as("seed %d: %s within its day", seed, bucket.key())
							.isLessThanOrEqualTo(bucket.enforced());
					}
				}
				return;
			}
			for (int j = 0; j < entries.size(); j++) {
				RecordingStore.Entry end = entries.get(j);
				if (!end.admission() || end.units() > bucket.capacity()) {
					continue;
				}
				long net = 0;
				for (int i = j; i >= 0; i--) {
					net += entries.get(i).units();
					long window = end.time() - entries.get(i).time();
					long allowed = bucket.capacity()
							+ Arith.mulDivCeil(window, bucket.enforced(), Arith.NANOS_PER_MINUTE);
					assertThat(net).as("seed %d: %s charged over %d ns", seed, bucket.key(), window)
						.isLessThanOrEqualTo(allowed);
				}
			}
		});
	}

}
