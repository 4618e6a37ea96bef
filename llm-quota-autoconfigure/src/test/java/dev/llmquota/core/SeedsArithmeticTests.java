package dev.llmquota.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.llmquota.QuotaWaitTimeoutException;
import dev.llmquota.store.LocalQuotaStore;
import org.junit.jupiter.api.Test;

import static dev.llmquota.core.BucketSpec.Scope.POOL;
import static dev.llmquota.core.Calls.acquire;
import static dev.llmquota.core.Dimension.REQUESTS_PER_MINUTE;
import static dev.llmquota.core.Dimension.TOKENS_PER_MINUTE;
import static dev.llmquota.core.TestConfigs.limits;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The worked examples of the chapters the project comes from, as executable arithmetic.
 */
class SeedsArithmeticTests {

	private final ManualClock clock = new ManualClock();

	/**
	 * 500 requests and 200,000 tokens per minute at headroom 0.8 and a 1.4 s latency: 9.3
	 * calls and 3,733 tokens may be in flight.
	 */
	private QuotaEngine seedsAccount() {
		return TestConfigs.provider()
			.headroom(0.8)
			// a long burst window, so that only the in-flight bounds bind here
			.burstWindow(Duration.ofSeconds(60))
			.expectedLatency(Duration.ofMillis(1400))
			.model("summariser", limits(REQUESTS_PER_MINUTE, 500, TOKENS_PER_MINUTE, 200_000))
			.engine(new LocalQuotaStore(), this.clock);
	}

	@Test
	void littlesLawGivesNinePointThreeCallsAndThreeThousandSevenHundredThirtyThreeTokensInFlight() {
		QuotaEngine engine = seedsAccount();
		PoolSnapshot snapshot = engine.snapshot(engine.pool("openai", "summariser"));
		assertThat(500 / 60.0 * 0.8 * 1.4).isCloseTo(9.3, within(0.05));
		assertThat(snapshot.gate(POOL, REQUESTS_PER_MINUTE, true).capacity()).isEqualTo(9);
		assertThat(snapshot.gate(POOL, TOKENS_PER_MINUTE, true).capacity()).isEqualTo(3_733);
	}

	@Test
	void aCallOfThreeThousandFourHundredFiftySixTokensIsAdmittedAloneAgainstThatGate() {
		QuotaEngine engine = seedsAccount();
		Pool pool = engine.pool("openai", "summariser");
		// 3,200 input tokens plus 256 reserved for the answer
		Demand call = new Demand(3_200, 256);
		Calls.Call first = acquire(engine, pool, call);
		Calls.Call second = acquire(engine, pool, call, null, Duration.ofSeconds(5));
		assertThat(first.admitted()).isTrue();
		assertThat(second.admitted()).isFalse();
		assertThat(engine.snapshot(pool).gate(POOL, TOKENS_PER_MINUTE, true).inUse()).isEqualTo(3_456);
		this.clock.advance(Duration.ofMillis(1400));
		first.permit().complete(new Usage(3_200, 0, 256));
		assertThat(second.admitted()).isTrue();
		Calls.Call third = acquire(engine, pool, call, null, Duration.ofSeconds(5));
		this.clock.advance(Duration.ofSeconds(5));
		assertThat(third.error()).isInstanceOf(QuotaWaitTimeoutException.class)
			.hasMessageContaining("pool tokens-per-minute in-flight bound");
	}

	@Test
	void aBurstOfFiveHundredFromABucketOfOneHundredAtOneHundredPerMinuteDrainsInFourMinutes() {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.burstWindow(Duration.ofSeconds(60))
			.maxWait(Duration.ofMinutes(10))
			.model("m", limits(REQUESTS_PER_MINUTE, 100))
			.engine(new LocalQuotaStore(), this.clock);
		Pool pool = engine.pool("openai", "m");
		List<Calls.Call> burst = new ArrayList<>();
		for (int i = 0; i < 500; i++) {
			burst.add(acquire(engine, pool, new Demand(1, 1)));
		}
		assertThat(burst.stream().filter(Calls.Call::admitted)).hasSize(100);
		this.clock.advance(Duration.ofMinutes(4).minusMillis(1));
		assertThat(burst.get(499).admitted()).isFalse();
		this.clock.advance(Duration.ofMillis(1));
		assertThat(burst).allMatch(Calls.Call::admitted);
		assertThat(burst.get(499).waited()).isEqualTo(Duration.ofMinutes(4));
	}

	@Test
	void reservingFourThousandNinetySixForAFortyTokenAnswerCutsAdmittedCallsFromSevenHundredNineToFortySix() {
		// 250 input tokens: 250 + 32 = 282 per call admits 709 a minute; 250 + 4,096 =
		// 4,346 admits 46
		assertThat(admittedInOneMinute(new Demand(250, 32))).isEqualTo(709);
		assertThat(admittedInOneMinute(new Demand(250, 4_096))).isEqualTo(46);
	}

	private int admittedInOneMinute(Demand demand) {
		ManualClock clock = new ManualClock();
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.burstWindow(Duration.ofSeconds(60))
			.model("m", limits(TOKENS_PER_MINUTE, 200_000))
			.engine(new LocalQuotaStore(), clock);
		Pool pool = engine.pool("openai", "m");
		int admitted = 0;
		while (acquire(engine, pool, demand, null, Duration.ZERO).admitted()) {
			admitted++;
		}
		return admitted;
	}

}
