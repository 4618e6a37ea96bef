package dev.llmquota.actuate;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;

import dev.llmquota.BudgetExhaustedException;
import dev.llmquota.core.Accounting;
import dev.llmquota.core.Calls;
import dev.llmquota.core.Cost;
import dev.llmquota.core.Demand;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.ManualClock;
import dev.llmquota.core.Pool;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.core.QuotaState;
import dev.llmquota.core.ServerLimit;
import dev.llmquota.core.TestConfigs;
import dev.llmquota.core.Usage;
import dev.llmquota.store.LocalQuotaStore;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;

import static dev.llmquota.core.Dimension.CONCURRENT_REQUESTS;
import static dev.llmquota.core.Dimension.INPUT_TOKENS_PER_MINUTE;
import static dev.llmquota.core.Dimension.REQUESTS_PER_DAY;
import static dev.llmquota.core.Dimension.REQUESTS_PER_MINUTE;
import static dev.llmquota.core.Dimension.TOKENS_PER_MINUTE;
import static dev.llmquota.core.TestConfigs.limits;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What {@code /actuator/llmquota} shows, from known traffic on a manual clock.
 */
class QuotaReportsTests {

	private final ManualClock clock = new ManualClock();

	@Test
	void bindingFlipsFromRequestsToInputTokensWhenPromptsGrowFrom250To3200Tokens() {
		QuotaEngine engine = TestConfigs.provider()
			.headroom(0.8)
			.inFlightGate(false)
			.burstWindow(Duration.ofSeconds(60))
			.model("summariser", limits(REQUESTS_PER_MINUTE, 500, INPUT_TOKENS_PER_MINUTE, 200_000))
			.engine(new LocalQuotaStore(), this.clock);
		Pool pool = engine.pool("openai", "summariser");
		QuotaReports reports = new QuotaReports(engine);
		for (int i = 0; i < 30; i++) {
			Calls.acquire(engine, pool, new Demand(250, 256)).permit().complete(new Usage(250, 0, 40));
			this.clock.advance(Duration.ofMillis(200));
		}
		assertThat(reports.report(null).pools().get(0).binding()).isEqualTo("requests-per-minute");
		for (int i = 0; i < 30; i++) {
			this.clock.advance(Duration.ofSeconds(2));
			Calls.acquire(engine, pool, new Demand(3_200, 256)).permit().complete(new Usage(3_200, 0, 40));
		}
		assertThat(reports.report(null).pools().get(0).binding()).isEqualTo("input-tokens-per-minute");
	}

	/**
	 * A provider's 429 on requests-per-minute holds every call of the pool for its wait:
	 * that binds while it holds, whatever the token bucket's rate, and no longer.
	 */
	@Test
	void aProvidersPenaltyBindsWhileItHolds() {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("gpt-4o", limits(REQUESTS_PER_MINUTE, 500, TOKENS_PER_MINUTE, 30_000))
			.engine(new LocalQuotaStore(), this.clock);
		Pool pool = engine.pool("openai", "gpt-4o");
		QuotaReports reports = new QuotaReports(engine);
		Calls.acquire(engine, pool, new Demand(1_000, 200)).permit().complete(new Usage(1_000, 0, 200));
		assertThat(reports.report(null).pools().get(0).binding()).isEqualTo("tokens-per-minute");
		engine.rateLimited(pool, REQUESTS_PER_MINUTE, Duration.ofSeconds(30));
		QuotaReport.PoolReport held = reports.report(null).pools().get(0);
		assertThat(held.state()).isEqualTo(QuotaState.THROTTLED);
		assertThat(held.binding()).isEqualTo("requests-per-minute");
		this.clock.advance(Duration.ofSeconds(31));
		assertThat(reports.report(null).pools().get(0).binding()).isEqualTo("tokens-per-minute");
	}

	/**
	 * A 429 that names no dimension holds the pool, but names no bucket: binding stays
	 * the one computed, named as in {@code dimensions}, not a requests-per-minute the
	 * pool has no limit on (raising which would change nothing).
	 */
	@Test
	void aPenaltyNamingNoDimensionLeavesTheBindingAsComputed() {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("gpt-4o", limits(TOKENS_PER_MINUTE, 30_000))
			.engine(new LocalQuotaStore(), this.clock);
		Pool pool = engine.pool("openai", "gpt-4o");
		Calls.acquire(engine, pool, new Demand(1_000, 200)).permit().complete(new Usage(1_000, 0, 200));
		engine.rateLimited(pool, null, Duration.ofSeconds(30));
		QuotaReport.PoolReport report = new QuotaReports(engine).report(null).pools().get(0);
		assertThat(report.state()).isEqualTo(QuotaState.THROTTLED);
		assertThat(report.lastRateLimit().dimension()).isEqualTo("unknown");
		assertThat(report.binding()).isEqualTo("tokens-per-minute");
		assertThat(Calls.acquire(engine, pool, new Demand(1_000, 200)).admitted()).as("held all the same").isFalse();
	}

	/**
	 * A per-day quota the provider says is spent (another service used it: the local
	 * count has room) refuses every call until its reset: it binds.
	 */
	@Test
	void aPerDayQuotaTheProviderSaysIsSpentBinds() {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("gemini", limits(REQUESTS_PER_MINUTE, 500, TOKENS_PER_MINUTE, 30_000, REQUESTS_PER_DAY, 1_000))
			.engine(new LocalQuotaStore(), this.clock);
		Pool pool = engine.pool("openai", "gemini");
		Calls.acquire(engine, pool, new Demand(1_000, 200)).permit().complete(new Usage(1_000, 0, 200));
		engine.exhaust(pool, false, REQUESTS_PER_DAY, "per-day quota", this.clock.instant().plus(Duration.ofHours(5)));
		QuotaReport.PoolReport report = new QuotaReports(engine).report(null).pools().get(0);
		assertThat(report.state()).isEqualTo(QuotaState.EXHAUSTED);
		assertThat(report.binding()).isEqualTo("requests-per-day");
	}

	/**
	 * The provider reports no request left for 50 s (another service spent them): the
	 * requests bucket, lowered, holds every call, and binds while it does, though the
	 * token rate admits fewer calls a minute.
	 */
	@Test
	void aBucketThatCannotTakeTheMeanCallNowBindsWhileItHolds() {
		QuotaEngine engine = TestConfigs.provider()
			.headroom(0.8)
			.inFlightGate(false)
			.burstWindow(Duration.ofSeconds(60))
			.model("gpt-4o", limits(REQUESTS_PER_MINUTE, 1_000, TOKENS_PER_MINUTE, 30_000))
			.engine(new LocalQuotaStore(), this.clock);
		Pool pool = engine.pool("openai", "gpt-4o");
		QuotaReports reports = new QuotaReports(engine);
		Calls.acquire(engine, pool, new Demand(1_000, 200)).permit().complete(new Usage(1_000, 0, 200));
		assertThat(reports.report(null).pools().get(0).binding()).isEqualTo("tokens-per-minute");
		engine.observe(pool,
				List.of(new ServerLimit(REQUESTS_PER_MINUTE, 1_000L, 0L, this.clock.instant().plusSeconds(50)),
						new ServerLimit(TOKENS_PER_MINUTE, 30_000L, 29_000L, this.clock.instant().plusSeconds(2))));
		Calls.settle(engine);
		assertThat(Calls.acquire(engine, pool, new Demand(1_000, 200)).admitted()).as("held by the requests bucket")
			.isFalse();
		assertThat(reports.report(null).pools().get(0).binding()).isEqualTo("requests-per-minute");
	}

	/**
	 * A fresh report (5,000 left, full in 54 s) and then an older one arriving last (a
	 * longer call's, written when 45,000 were left, full in 2 s): the bucket only refills
	 * between them, so the endpoint shows the tighter one, as the books keep it.
	 */
	@Test
	void anOlderReportArrivingLastDoesNotReplaceTheFresherOneOnTheEndpoint() {
		QuotaEngine engine = TestConfigs.provider()
			.headroom(0.8)
			.inFlightGate(false)
			.burstWindow(Duration.ofSeconds(60))
			.model("claude", limits(INPUT_TOKENS_PER_MINUTE, 50_000))
			.engine(new LocalQuotaStore(), this.clock);
		Pool pool = engine.pool("openai", "claude");
		engine.observe(pool, List
			.of(new ServerLimit(INPUT_TOKENS_PER_MINUTE, 50_000L, 5_000L, this.clock.instant().plusSeconds(54))));
		engine.observe(pool, List
			.of(new ServerLimit(INPUT_TOKENS_PER_MINUTE, 50_000L, 45_000L, this.clock.instant().plusSeconds(2))));
		Calls.settle(engine);
		QuotaReport.RateDimension input = (QuotaReport.RateDimension) new QuotaReports(engine).report(null)
			.pools()
			.get(0)
			.dimensions()
			.get("input-tokens-per-minute");
		assertThat(input.remaining()).as("what the provider has left, as its tighter report says: %s", input)
			.isEqualTo(5_000);
	}

	/**
	 * Calls larger than the token bucket (a 2 s burst window holds 1,000 of 30,000 a
	 * minute) go once it is full: an idle full bucket holds none, and the requests rate,
	 * 3 calls a minute against the tokens' 6, binds.
	 */
	@Test
	void callsLargerThanTheirBucketAreNotHeldByItWhenItIsFull() {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("gpt-4o", limits(REQUESTS_PER_MINUTE, 3, TOKENS_PER_MINUTE, 30_000))
			.engine(new LocalQuotaStore(), this.clock);
		Pool pool = engine.pool("openai", "gpt-4o");
		Calls.acquire(engine, pool, new Demand(5_000, 0)).permit().complete(new Usage(5_000, 0, 0));
		this.clock.advance(Duration.ofMinutes(1));
		assertThat(reports(engine).pools().get(0).binding()).isEqualTo("requests-per-minute");
	}

	@Test
	void bindingNamesTheAccountsBucketWhenTheAccountCeilingBinds() {
		// the model may take 1,000,000 tokens a minute, the account only 30,000
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.account(limits(TOKENS_PER_MINUTE, 30_000))
			.model("gpt-4o", limits(REQUESTS_PER_MINUTE, 10_000, TOKENS_PER_MINUTE, 1_000_000))
			.engine(new LocalQuotaStore(), this.clock);
		Pool pool = engine.pool("openai", "gpt-4o");
		Calls.acquire(engine, pool, new Demand(1_000, 500)).permit().complete(new Usage(1_000, 0, 500));
		QuotaReport.PoolReport report = new QuotaReports(engine).report(null).pools().get(0);
		assertThat(report.dimensions()).containsKeys("tokens-per-minute", "account:tokens-per-minute");
		assertThat(report.binding()).as("the key of the dimension that binds, as the dimensions map names it")
			.isEqualTo("account:tokens-per-minute");
	}

	@Test
	void aSpentBudgetBindsWhileItRefusesEveryCall() {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.accounting(new Accounting(true, true, true, 1, new Cost(10, 30, 10)))
			.account(limits(Dimension.BUDGET_PER_DAY, 100_000))
			.model("gpt-4o", limits(REQUESTS_PER_MINUTE, 500, TOKENS_PER_MINUTE, 3_000_000))
			.engine(new LocalQuotaStore(), this.clock);
		Pool pool = engine.pool("openai", "gpt-4o");
		QuotaReports reports = new QuotaReports(engine);
		for (int i = 0; i < 3; i++) {
			// 0.025 each: 0.075 of the day's 0.10 spent, a call reserving 0.04 no longer
			// fits
			Calls.acquire(engine, pool, new Demand(1_000, 1_000)).permit().complete(new Usage(1_000, 0, 500));
			if (i < 2) {
				assertThat(reports.report(null).pools().get(0).binding()).as("while calls fit")
					.isEqualTo("requests-per-minute");
			}
			this.clock.advance(Duration.ofSeconds(2));
		}
		assertThat(Calls.acquire(engine, pool, new Demand(1_000, 1_000)).error())
			.isInstanceOf(BudgetExhaustedException.class);
		assertThat(reports.report(null).pools().get(0).binding()).as("what refuses every call of the pool now")
			.isEqualTo("account:budget-per-day");
	}

	@Test
	void aProvidersFigurePastItsResetIsNotShownAsWhatIsLeft() {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.model("gpt-4o", limits(REQUESTS_PER_MINUTE, 500, TOKENS_PER_MINUTE, 30_000))
			.engine(new LocalQuotaStore(), this.clock);
		Pool pool = engine.pool("openai", "gpt-4o");
		Calls.acquire(engine, pool, new Demand(100, 100)).permit().complete(new Usage(100, 0, 100));
		// the provider's last answers: no tokens left, full again in 2 s; 10 requests
		// left, with no reset named
		engine.observe(pool,
				List.of(new ServerLimit(TOKENS_PER_MINUTE, 30_000L, 0L,
						this.clock.instant().plus(Duration.ofSeconds(2))),
						new ServerLimit(REQUESTS_PER_MINUTE, 500L, 10L, null)));
		QuotaReport.PoolReport now = reports(engine).pools().get(0);
		assertThat(((QuotaReport.RateDimension) now.dimensions().get("tokens-per-minute")).source())
			.isEqualTo("server");
		assertThat(((QuotaReport.RateDimension) now.dimensions().get("requests-per-minute")).remaining()).isEqualTo(10);
		this.clock.advance(Duration.ofMinutes(10));
		QuotaReport.PoolReport later = reports(engine).pools().get(0);
		QuotaReport.RateDimension tokens = (QuotaReport.RateDimension) later.dimensions().get("tokens-per-minute");
		assertThat(tokens.source()).as("the provider's figure ran out at its reset").isEqualTo("local");
		assertThat(tokens.remaining()).as("what admission sees ten minutes on").isGreaterThan(20_000);
		QuotaReport.RateDimension requests = (QuotaReport.RateDimension) later.dimensions().get("requests-per-minute");
		assertThat(requests.source()).as("a figure without a reset holds for its minute").isEqualTo("local");
		assertThat(requests.remaining()).isGreaterThan(390);
	}

	@Test
	void aBudgetSetThroughTheWriteOperationIsInTheCurrencyTheReportShowsItIn() {
		QuotaEngine engine = TestConfigs.provider()
			.accounting(new Accounting(true, true, true, 1, new Cost(10, 30, 10)))
			.account(limits(Dimension.BUDGET_PER_DAY, 50_000_000))
			.model("gpt-4o", limits())
			.engine(new LocalQuotaStore(), this.clock);
		LlmQuotaEndpoint endpoint = new LlmQuotaEndpoint(engine);
		assertThat(budget(endpoint.quotas()).budget()).as("50.00 configured, shown in the currency").isEqualTo(50.0);
		// an operator tops the day's budget up from 50.00 to 62.50
		assertThat(budget(endpoint.update("openai", null, null, "budget-per-day", new BigDecimal("62.50"))).budget())
			.isEqualTo(62.5);
		assertThat(engine.pool("openai", "gpt-4o").account().limits().asMap()).containsEntry(Dimension.BUDGET_PER_DAY,
				62_500_000L);
	}

	/**
	 * A budget no price of the entry can spend would never trip: a 400 says so, as
	 * start-up does for the same budget in configuration.
	 */
	@Test
	void aBudgetNoPriceCanSpendIsA400() {
		QuotaEngine engine = TestConfigs.provider()
			.model("gpt-4o", limits(TOKENS_PER_MINUTE, 30_000))
			.engine(new LocalQuotaStore(), this.clock);
		LlmQuotaEndpoint endpoint = new LlmQuotaEndpoint(engine);
		assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> endpoint.update("openai", null, null, "budget-per-day", new BigDecimal("1.00")))
			.withMessageContaining("budget-per-day")
			.withMessageContaining("price");
		assertThat(engine.pool("openai", "gpt-4o").account().limits().asMap())
			.doesNotContainKey(Dimension.BUDGET_PER_DAY);
	}

	/**
	 * A model's reset while the whole account is spent (a billing answer) would change
	 * nothing: a 400 says so and how to lift it, instead of a 200 that leaves every call
	 * failing.
	 */
	@Test
	void aModelsResetWhileTheWholeAccountIsSpentIsA400SayingHowToLiftIt() {
		QuotaEngine engine = TestConfigs.provider()
			.model("gpt-4o", limits(TOKENS_PER_MINUTE, 30_000))
			.engine(new LocalQuotaStore(), this.clock);
		LlmQuotaEndpoint endpoint = new LlmQuotaEndpoint(engine);
		Pool pool = engine.pool("openai", "gpt-4o");
		engine.exhaust(pool, true, null, "insufficient_quota", null);
		assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> endpoint.update("openai", "gpt-4o", true, "tokens-per-minute", new BigDecimal(60_000)))
			.withMessageContaining("whole account")
			.withMessageContaining("without 'model'");
		assertThat(engine.state(pool)).isEqualTo(QuotaState.EXHAUSTED);
		assertThat(pool.limits().asMap()).as("the change it came with").containsEntry(TOKENS_PER_MINUTE, 30_000L);
		endpoint.update("openai", null, true, null, null);
		assertThat(engine.state(pool)).isEqualTo(QuotaState.OK);
	}

	/**
	 * What the write operation cannot set is the operator's mistake, a 400 naming it, not
	 * a 500; and a rejected change resets nothing it came with.
	 */
	@Test
	void whatTheWriteOperationCannotSetIsA400NamingItAndChangesNothing() {
		QuotaEngine engine = TestConfigs.provider()
			.accounting(new Accounting(true, true, true, 1, new Cost(10, 30, 10)))
			.account(limits(Dimension.BUDGET_PER_DAY, 50_000_000))
			.model("gpt-4o", limits(TOKENS_PER_MINUTE, 30_000))
			.engine(new LocalQuotaStore(), this.clock);
		LlmQuotaEndpoint endpoint = new LlmQuotaEndpoint(engine);
		Pool pool = engine.pool("openai", "gpt-4o");
		engine.exhaust(pool, false, null, "insufficient_quota", null);
		assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> endpoint.update("openai", "gpt-4o", true, "tokens-per-minute", BigDecimal.ZERO))
			.withMessageContaining("positive");
		assertThat(engine.state(pool)).as("the reset that came with it").isEqualTo(QuotaState.EXHAUSTED);
		assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> endpoint.update("openai", null, null, "budget-per-day", new BigDecimal("0.0000001")))
			.withMessageContaining("budget-per-day");
		assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(
					() -> endpoint.update("openai", "gpt-4o-typo", null, "tokens-per-minute", new BigDecimal(60_000)))
			.withMessageContaining("gpt-4o-typo");
		assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> endpoint.update("openai", "gpt-4o-typo", true, null, null))
			.withMessageContaining("gpt-4o-typo");
		assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> endpoint.update("openai", "gpt-4o", null, "concurrent-requests", new BigDecimal(10)))
			.withMessageContaining("concurrent-requests");
		assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> endpoint.update("openai", "gpt-4o", null, "tokens-per-minute", null))
			.withMessageContaining("limit");
		assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> endpoint.update("openai", "gpt-4o", null, null, new BigDecimal(60_000)))
			.withMessageContaining("dimension");
		assertThat(pool.limits().asMap()).containsEntry(TOKENS_PER_MINUTE, 30_000L);
		assertThat(engine.state(pool)).isEqualTo(QuotaState.EXHAUSTED);
	}

	private static QuotaReport.BudgetDimension budget(QuotaReport report) {
		return (QuotaReport.BudgetDimension) report.accounts().get(0).dimensions().get("budget-per-day");
	}

	private static QuotaReport reports(QuotaEngine engine) {
		return new QuotaReports(engine).report(null);
	}

	@Test
	void anIdlePoolShowsItsWholeLimitAsRemainingInTheProvidersTermsAndItsBucketUnderLocal() {
		// Bedrock reports nothing in headers: every figure comes from the local books
		QuotaEngine engine = TestConfigs.provider()
			.headroom(0.8)
			.model("claude", limits(REQUESTS_PER_MINUTE, 50, TOKENS_PER_MINUTE, 200_000))
			.engine(new LocalQuotaStore(), this.clock);
		QuotaReport.PoolReport pool = new QuotaReports(engine).report(null).pools().get(0);
		QuotaReport.RateDimension requests = (QuotaReport.RateDimension) pool.dimensions().get("requests-per-minute");
		assertThat(requests.source()).isEqualTo("local");
		assertThat(requests.remaining()).isEqualTo(50);
		assertThat(requests.local().capacity()).isEqualTo(1);
		assertThat(requests.local().remaining()).isEqualTo(1);
		QuotaReport.RateDimension tokens = (QuotaReport.RateDimension) pool.dimensions().get("tokens-per-minute");
		assertThat(tokens.remaining()).isEqualTo(200_000);
		Calls.Call call = Calls.acquire(engine, engine.pool("openai", "claude"), new Demand(1_000, 100));
		QuotaReport.PoolReport busy = new QuotaReports(engine).report(null).pools().get(0);
		assertThat(((QuotaReport.RateDimension) busy.dimensions().get("requests-per-minute")).remaining())
			.as("the one request of the bucket is taken: nothing left, never negative")
			.isZero();
		call.permit().complete(new Usage(1_000, 0, 100));
	}

	@Test
	void aBudgetShowsWhatWasSpentWhatIsLeftWhenItResetsAndWhetherItWarns() {
		QuotaEngine engine = TestConfigs.provider()
			.accounting(new Accounting(true, true, true, 1, new Cost(10, 30, 10)))
			.account(limits(Dimension.BUDGET_PER_DAY, 100_000))
			.model("gpt-4o", limits())
			.engine(new LocalQuotaStore(), this.clock);
		Pool pool = engine.pool("openai", "gpt-4o");
		for (int i = 0; i < 3; i++) {
			// 1,000 x 10 + 500 x 30 = 0.025 each
			Calls.acquire(engine, pool, new Demand(1_000, 1_000)).permit().complete(new Usage(1_000, 0, 500));
		}
		QuotaReport.BudgetDimension budget = (QuotaReport.BudgetDimension) new QuotaReports(engine).report(null)
			.accounts()
			.get(0)
			.dimensions()
			.get("budget-per-day");
		assertThat(budget).isEqualTo(new QuotaReport.BudgetDimension(0.1, 0.075, 0.025, "2026-12-01T00:00:00Z", false));
		Calls.acquire(engine, pool, new Demand(0, 0)).permit().complete(new Usage(500, 0, 0));
		budget = (QuotaReport.BudgetDimension) new QuotaReports(engine).report(null)
			.accounts()
			.get(0)
			.dimensions()
			.get("budget-per-day");
		assertThat(budget.warning()).as("0.08 of 0.10 spent: the 80% warning").isTrue();
	}

	/**
	 * {@code inFlight.tokens} is what calls in flight took from the token bucket: the
	 * output ceiling counted as the pool charges it (five times with a burndown of 5; not
	 * at all where output is charged only as generated).
	 */
	@Test
	void tokensInFlightAreWhatTheCallsTookFromTheTokenBucket() {
		for (Accounting accounting : List.of(new Accounting(true, true, true, 5),
				new Accounting(false, false, true, 1))) {
			QuotaEngine engine = TestConfigs.provider()
				.inFlightGate(false)
				.burstWindow(Duration.ofSeconds(60))
				.accounting(accounting)
				.model("claude", limits(REQUESTS_PER_MINUTE, 500, TOKENS_PER_MINUTE, 100_000))
				.engine(new LocalQuotaStore(), this.clock);
			Calls.Call call = Calls.acquire(engine, engine.pool("openai", "claude"), new Demand(1_000, 200));
			QuotaReport.PoolReport report = reports(engine).pools().get(0);
			QuotaReport.RateDimension tokens = (QuotaReport.RateDimension) report.dimensions().get("tokens-per-minute");
			long taken = tokens.local().capacity() - tokens.local().remaining();
			assertThat(taken).isEqualTo(accounting.reserveMaxTokens() ? 2_000 : 1_000);
			assertThat(report.inFlight().tokens()).isEqualTo(taken);
			call.permit().complete(new Usage(1_000, 0, 200));
			assertThat(reports(engine).pools().get(0).inFlight().tokens()).isZero();
		}
	}

	@Test
	void derivedBoundsFollowLittlesLawOnTheSeedsNumbers() {
		QuotaEngine engine = TestConfigs.provider()
			.headroom(0.8)
			.expectedLatency(Duration.ofMillis(1400))
			.model("summariser", limits(REQUESTS_PER_MINUTE, 500, TOKENS_PER_MINUTE, 200_000))
			.engine(new LocalQuotaStore(), this.clock);
		QuotaReport.Derived derived = new QuotaReports(engine).report(null).pools().get(0).derived();
		assertThat(derived.latencyMs()).isEqualTo(1400);
		assertThat(derived.inFlightCalls()).isEqualTo(9.3);
		assertThat(derived.inFlightTokens()).isEqualTo(3_733);
	}

	@Test
	void theJsonShowsEveryDimensionFieldForFieldAsTheContractSays() {
		QuotaEngine engine = TestConfigs.provider()
			.headroom(0.8)
			.account(limits(TOKENS_PER_MINUTE, 3_000_000))
			.model("gpt-4o", limits(REQUESTS_PER_MINUTE, 500, TOKENS_PER_MINUTE, 30_000, CONCURRENT_REQUESTS, 64))
			.engine(new LocalQuotaStore(), this.clock);
		Pool pool = engine.pool("openai", "gpt-4o");
		Calls.Call call = Calls.acquire(engine, pool, new Demand(500, 60));
		engine.observe(pool, java.util.List
			.of(new ServerLimit(REQUESTS_PER_MINUTE, 500L, 197L, java.time.Instant.parse("2026-11-30T12:00:34Z"))));
		JsonNode json = JsonMapper.shared().valueToTree(new QuotaReports(engine).report(null));
		JsonNode entry = json.path("pools").get(0);
		assertThat(entry.path("provider").asString()).isEqualTo("openai");
		assertThat(entry.path("region").asString()).isEqualTo("us");
		assertThat(entry.path("model").asString()).isEqualTo("gpt-4o");
		assertThat(entry.path("state").asString()).isEqualTo("OK");
		JsonNode requests = entry.path("dimensions").path("requests-per-minute");
		assertThat(requests.path("limit").asLong()).isEqualTo(500);
		assertThat(requests.path("enforced").asLong()).isEqualTo(400);
		assertThat(requests.path("remaining").asLong()).isEqualTo(197);
		assertThat(requests.path("reset").asString()).isEqualTo("2026-11-30T12:00:34Z");
		assertThat(requests.path("source").asString()).isEqualTo("server");
		assertThat(requests.path("local").path("capacity").asLong()).isEqualTo(13);
		assertThat(requests.path("local").path("remaining").asLong()).isEqualTo(12);
		JsonNode tokens = entry.path("dimensions").path("tokens-per-minute");
		assertThat(tokens.path("source").asString()).isEqualTo("local");
		// in the provider's terms: 240 of the bucket's 800 are 9,000 of the 30,000
		assertThat(tokens.path("local").path("remaining").asLong()).isEqualTo(800 - 560);
		assertThat(tokens.path("remaining").asLong()).isEqualTo(30_000L * (800 - 560) / 800);
		assertThat(tokens.has("reset")).isTrue();
		JsonNode concurrency = entry.path("dimensions").path("concurrent-requests");
		assertThat(concurrency.path("limit").asLong()).isEqualTo(64);
		assertThat(concurrency.path("enforced").asLong()).isEqualTo(51);
		assertThat(concurrency.path("inUse").asLong()).isEqualTo(1);
		assertThat(concurrency.has("remaining")).isFalse();
		assertThat(entry.path("dimensions").path("account:tokens-per-minute").path("enforced").asLong())
			.isEqualTo(2_400_000);
		assertThat(entry.path("inFlight").path("requests").asLong()).isEqualTo(1);
		assertThat(entry.path("inFlight").path("tokens").asLong()).isEqualTo(560);
		assertThat(entry.path("derived").path("latencyMs").asLong()).isEqualTo(1400);
		JsonNode account = json.path("accounts").get(0);
		assertThat(account.path("state").asString()).isEqualTo("OK");
		assertThat(account.path("dimensions").path("tokens-per-minute").path("limit").asLong()).isEqualTo(3_000_000);
		assertThat(account.path("dimensions").path("tokens-per-minute").path("source").asString()).isEqualTo("local");
		call.permit().complete(new Usage(500, 0, 60));
	}

	@Test
	void recommendsAMaxTokensWhenReservationFarExceedsUse() {
		QuotaEngine engine = TestConfigs.provider()
			.inFlightGate(false)
			.burstWindow(Duration.ofSeconds(60))
			.model("m", limits(TOKENS_PER_MINUTE, 10_000_000))
			.engine(new LocalQuotaStore(), this.clock);
		Pool pool = engine.pool("openai", "m");
		for (int i = 1; i <= 100; i++) {
			Calls.acquire(engine, pool, new Demand(100, 4_096)).permit().complete(new Usage(100, 0, i));
		}
		QuotaReport.Output output = new QuotaReports(engine).report(null).pools().get(0).output();
		assertThat(output.reserved()).isEqualTo(409_600);
		assertThat(output.billed()).isEqualTo(5_050);
		assertThat(output.p99()).isEqualTo(99);
		assertThat(output.recommendedMaxTokens()).isEqualTo(119);
	}

	@Test
	void warnsWhenAConfiguredLimitDiffersFromWhatTheProviderReports() {
		QuotaEngine engine = TestConfigs.provider()
			.model("gpt-4o", limits(TOKENS_PER_MINUTE, 30_000))
			.engine(new LocalQuotaStore(), this.clock);
		Pool pool = engine.pool("openai", "gpt-4o");
		engine.observe(pool, java.util.List.of(new ServerLimit(TOKENS_PER_MINUTE, 800_000L, 790_000L, null)));
		assertThat(new QuotaReports(engine).report(null).pools().get(0).warnings())
			.containsExactly("tokens-per-minute is configured as 30000 but the provider reports 800000");
	}

	@Test
	void statesShowPenaltiesAndExhaustion() {
		QuotaEngine engine = TestConfigs.provider()
			.model("gpt-4o", limits(TOKENS_PER_MINUTE, 30_000))
			.model("o3", limits(TOKENS_PER_MINUTE, 30_000))
			.engine(new LocalQuotaStore(), this.clock);
		Pool gpt = engine.pool("openai", "gpt-4o");
		engine.penalize(gpt, Dimension.TOKENS_PER_MINUTE, Duration.ofSeconds(2));
		assertThat(engine.state(gpt)).isEqualTo(QuotaState.THROTTLED);
		this.clock.advance(Duration.ofSeconds(2));
		assertThat(engine.state(gpt)).isEqualTo(QuotaState.OK);
		engine.exhaust(gpt, true, null, "insufficient_quota", null);
		assertThat(engine.state(engine.pool("openai", "o3"))).isEqualTo(QuotaState.EXHAUSTED);
		assertThat(new QuotaReports(engine).report(null).accounts().get(0).state()).isEqualTo(QuotaState.EXHAUSTED);
		engine.resetExhausted("openai", null);
		assertThat(engine.state(gpt)).isEqualTo(QuotaState.OK);
	}

	@Test
	void onlyACallAdmittedAfterTheExhaustionEndsIt() {
		QuotaEngine engine = TestConfigs.provider()
			.model("gpt-4o", limits(TOKENS_PER_MINUTE, 30_000))
			.engine(new LocalQuotaStore(), this.clock);
		Pool pool = engine.pool("openai", "gpt-4o");
		Calls.Call slow = Calls.acquire(engine, pool, new Demand(10, 10));
		this.clock.advance(Duration.ofMillis(10));
		engine.exhaust(pool, true, null, "insufficient_quota", null);
		engine.succeeded(slow.permit());
		assertThat(engine.state(pool)).as("a call sent before the answer proves nothing")
			.isEqualTo(QuotaState.EXHAUSTED);
		this.clock.advance(Duration.ofMinutes(5));
		Calls.Call probe = Calls.acquire(engine, pool, new Demand(10, 10));
		assertThat(probe.admitted()).isTrue();
		assertThat(Calls.acquire(engine, pool, new Demand(10, 10)).error()).as("one probe per interval")
			.isInstanceOf(dev.llmquota.QuotaExhaustedException.class);
		engine.succeeded(probe.permit());
		assertThat(engine.state(pool)).isEqualTo(QuotaState.OK);
	}

}
