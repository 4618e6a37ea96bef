package dev.llmquota.core;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static dev.llmquota.core.Calls.acquire;
import static dev.llmquota.core.Dimension.INPUT_TOKENS_PER_MINUTE;
import static dev.llmquota.core.Dimension.OUTPUT_TOKENS_PER_MINUTE;
import static dev.llmquota.core.Dimension.REQUESTS_PER_MINUTE;
import static dev.llmquota.core.TestConfigs.limits;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Where output is charged as it is generated ({@code reserve-max-tokens: false},
 * Anthropic's default), admission still sees it coming: which dimension binds and the
 * in-flight bound on output count an expected output per call (the call's ceiling, capped
 * at the bucket, until calls complete; then the pool's observed mean), while the charge
 * stays the actual output.
 */
class ExpectedOutputTests {

	private static final Accounting METERED_AS_GENERATED = new Accounting(false, true, false, 1);

	private final ManualClock clock = new ManualClock();

	private final TestStores stores = new TestStores();

	@AfterEach
	void closeStores() {
		this.stores.close();
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void outputTokensPerMinuteBindsAnAnthropicPoolBeforeAndAfterItsCallsComplete(TestStores.Kind store) {
		// 50 requests, 50,000 input and 8,000 output tokens a minute; calls of 500 tokens
		// in, max_tokens 1,024, about 600 out: output admits 13 calls a minute, input 100
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.headroom(1.0)
			.accounting(METERED_AS_GENERATED)
			.model("claude",
					limits(REQUESTS_PER_MINUTE, 50, INPUT_TOKENS_PER_MINUTE, 50_000, OUTPUT_TOKENS_PER_MINUTE, 8_000))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "claude");
		Calls.Call first = acquire(engine, pool, new Demand(500, 1_024));
		assertThat(Binding.of(pool, engine.config().settings(), List.of(), this.clock.nanoTime()).dimension())
			.isEqualTo(OUTPUT_TOKENS_PER_MINUTE);
		first.permit().complete(new Usage(500, 0, 600));
		assertThat(Binding.of(pool, engine.config().settings(), List.of(), this.clock.nanoTime()).dimension())
			.isEqualTo(OUTPUT_TOKENS_PER_MINUTE);
		// the charge is the actual output, never the expectation
		assertThat(engine.snapshot(pool).bucket(BucketSpec.Scope.POOL, OUTPUT_TOKENS_PER_MINUTE).remaining())
			.isEqualTo(266 - 600);
	}

	/**
	 * A call that ends with nothing reported (a read timeout, a cancel before any usage,
	 * an answer in an unknown format) may have been generated in full: where output is
	 * charged only as reported, its ceiling is charged, so the books never drift below
	 * the provider's. A call that reported its usage is charged that, never the ceiling.
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aCallEndingWithNothingReportedIsChargedItsOutputCeiling(TestStores.Kind store) {
		QuotaEngine engine = minuteOfTokens(store);
		Pool pool = engine.pool("openai", "claude");
		acquire(engine, pool, new Demand(100, 700)).permit().release();
		acquire(engine, pool, new Demand(100, 300)).permit().complete(null);
		acquire(engine, pool, new Demand(100, 900)).permit().complete(new Usage(100, 0, 50));
		assertThat(engine.snapshot(pool).bucket(BucketSpec.Scope.POOL, OUTPUT_TOKENS_PER_MINUTE).remaining())
			.isEqualTo(60_000 - 700 - 300 - 50);
		assertThat(engine.snapshot(pool).bucket(BucketSpec.Scope.POOL, INPUT_TOKENS_PER_MINUTE).remaining())
			.isEqualTo(60_000 - 300);
	}

	/**
	 * A call admitted but never started (its caller gave up as it was admitted) gives
	 * back everything it booked: where output is charged only as reported, no ceiling is
	 * charged for it either, and a second end changes nothing.
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aCallThatNeverStartedIsChargedNothing(TestStores.Kind store) {
		QuotaEngine engine = minuteOfTokens(store);
		Pool pool = engine.pool("openai", "claude");
		QuotaPermit permit = acquire(engine, pool, new Demand(100, 700)).permit();
		permit.cancel();
		permit.cancel();
		permit.release();
		assertThat(engine.inFlight(pool.account())).isZero();
		assertThat(engine.snapshot(pool).bucket(BucketSpec.Scope.POOL, OUTPUT_TOKENS_PER_MINUTE).remaining())
			.isEqualTo(60_000);
		assertThat(engine.snapshot(pool).bucket(BucketSpec.Scope.POOL, INPUT_TOKENS_PER_MINUTE).remaining())
			.isEqualTo(60_000);
	}

	/** 60,000 input and output tokens a minute, all of them in the bucket at once. */
	private QuotaEngine minuteOfTokens(TestStores.Kind store) {
		return TestConfigs.provider()
			.inFlightGate(false)
			.headroom(1.0)
			.burstWindow(Duration.ofSeconds(60))
			.accounting(METERED_AS_GENERATED)
			.model("claude", limits(OUTPUT_TOKENS_PER_MINUTE, 60_000, INPUT_TOKENS_PER_MINUTE, 60_000))
			.engine(this.stores.open(store, this.clock), this.clock);
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void theOutputInFlightBoundHoldsCallsBackByTheirExpectedOutput(TestStores.Kind store) {
		// 6,000 output tokens a minute at 10 s a call: 1,000 output tokens may be in
		// flight; calls of max_tokens 600 go one at a time
		QuotaEngine engine = TestConfigs.provider()
			.headroom(1.0)
			.burstWindow(Duration.ofSeconds(60))
			.expectedLatency(Duration.ofSeconds(10))
			.accounting(METERED_AS_GENERATED)
			.model("claude", limits(OUTPUT_TOKENS_PER_MINUTE, 6_000))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "claude");
		Calls.Call first = acquire(engine, pool, new Demand(100, 600));
		Calls.Call second = acquire(engine, pool, new Demand(100, 600));
		assertThat(first.admitted()).isTrue();
		assertThat(second.admitted()).as("600 + 600 expected output exceed the 1,000 in flight").isFalse();
		this.clock.advance(Duration.ofSeconds(10));
		first.permit().complete(new Usage(100, 0, 200));
		assertThat(second.admitted()).isTrue();
		// observed: 200 a call and 10 s each, so five fit beside each other now
		this.clock.advance(Duration.ofSeconds(10));
		second.permit().complete(new Usage(100, 0, 200));
		Calls.Call[] next = new Calls.Call[5];
		for (int i = 0; i < next.length; i++) {
			next[i] = acquire(engine, pool, new Demand(100, 600));
		}
		assertThat(next).allSatisfy((call) -> assertThat(call.admitted()).isTrue());
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void anOversizedCeilingCountsNoMoreThanTheBucketHolds(TestStores.Kind store) {
		// 8,000 a minute, 2 s window: a bucket of 266; max_tokens 64,000 counts 266
		QuotaEngine engine = TestConfigs.provider()
			.headroom(1.0)
			.accounting(METERED_AS_GENERATED)
			.model("claude", limits(OUTPUT_TOKENS_PER_MINUTE, 8_000))
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "claude");
		assertThat(pool.expectedOutput(new Demand(10, 64_000))).isEqualTo(266);
		assertThat(pool.expectedOutput(new Demand(10, 100))).isEqualTo(100);
	}

}
