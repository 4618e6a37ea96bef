package dev.llmquota.core;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.llmquota.BudgetExhaustedException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static dev.llmquota.core.Dimension.BUDGET_PER_DAY;
import static dev.llmquota.core.Dimension.BUDGET_PER_MONTH;
import static dev.llmquota.core.Dimension.TOKENS_PER_DAY;
import static dev.llmquota.core.TestConfigs.limits;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Money budgets: a call reserves what it may cost (its input estimate and whole output
 * ceiling at the model's prices), is charged what it did cost, and is refused once the
 * period's budget cannot pay for it, until the next calendar day or month in the entry's
 * zone.
 */
class BudgetTests {

	/**
	 * 10 per million input tokens, 30 per million output: 10 and 30 millionths a token.
	 */
	private static final Accounting PRICED = new Accounting(true, true, true, 1, new Cost(10, 30, 10));

	/** Reserves 1,000 x 10 + 1,000 x 30 = 40,000 millionths (0.04). */
	private static final Demand DEMAND = new Demand(1_000, 1_000);

	/** Costs 1,000 x 10 + 500 x 30 = 25,000 millionths (0.025). */
	private static final Usage USAGE = new Usage(1_000, 0, 500);

	private final ManualClock clock = new ManualClock(Instant.parse("2026-11-30T12:00:00Z"));

	private final TestStores stores = new TestStores();

	@AfterEach
	void closeStores() {
		this.stores.close();
	}

	private QuotaEngine engine(TestStores.Kind store, Dimension budget, ZoneId zone) {
		return TestConfigs.provider()
			.accounting(PRICED)
			.zone(zone)
			.maxWait(Duration.ofSeconds(30))
			.account(limits(budget, 1_000_000))
			.model("gpt-4o", limits())
			.engine(this.stores.open(store, this.clock), this.clock);
	}

	/** Admits and completes calls until one is refused; returns how many went. */
	private int spend(QuotaEngine engine) {
		Pool pool = engine.pool("openai", "gpt-4o");
		for (int calls = 0;; calls++) {
			Calls.Call call = Calls.acquire(engine, pool, DEMAND);
			if (!call.admitted()) {
				assertThat(call.error()).isInstanceOf(BudgetExhaustedException.class);
				return calls;
			}
			call.permit().complete(USAGE);
		}
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aBudgetAdmitsCallsWhileItCanPayForWhatTheyReserveAndChargesWhatTheyCost(TestStores.Kind store) {
		QuotaEngine engine = engine(store, BUDGET_PER_DAY, ZoneId.of("UTC"));
		// after 38 calls 0.95 is spent: a 39th reserving 0.04 fits, a 40th does not
		assertThat(spend(engine)).isEqualTo(39);
		Pool pool = engine.pool("openai", "gpt-4o");
		assertThat(engine.snapshot(pool).buckets().get(0).remaining()).as("left of 1.00 after 39 x 0.025")
			.isEqualTo(1_000_000 - 39 * 25_000);
		Calls.Call refused = Calls.acquire(engine, pool, DEMAND);
		BudgetExhaustedException error = (BudgetExhaustedException) refused.error();
		assertThat(error.getDimension()).isEqualTo("budget-per-day");
		assertThat(error.getMessage()).contains("2026-12-01T00:00:00Z");
	}

	/**
	 * A call that may cost more than the whole budget (here up to 3.01 of a day's or a
	 * month's 1.00) is never sent, even as the period's first call: the budget is a cap,
	 * and waiting for the next period would not help it.
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aCallThatMayCostMoreThanTheWholeBudgetFailsFastAndSpendsNothing(TestStores.Kind store) {
		for (Dimension budget : new Dimension[] { BUDGET_PER_DAY, BUDGET_PER_MONTH }) {
			QuotaEngine engine = engine(store, budget, ZoneId.of("UTC"));
			Pool pool = engine.pool("openai", "gpt-4o");
			Calls.Call call = Calls.acquire(engine, pool, new Demand(1_000, 100_000));
			assertThat(call.admitted()).as(budget.id()).isFalse();
			BudgetExhaustedException error = (BudgetExhaustedException) call.error();
			assertThat(error.getDimension()).isEqualTo(budget.id());
			assertThat(error.getReset()).as("no reset makes room for it").isNull();
			assertThat(error.getMessage()).contains("3.01").contains("max_tokens");
			assertThat(engine.snapshot(pool).buckets().get(0).remaining()).isEqualTo(1_000_000);
			// a call it can pay for still goes
			assertThat(Calls.acquire(engine, pool, DEMAND).admitted()).isTrue();
			engine.close();
		}
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aRefusedCallCostsNothing(TestStores.Kind store) {
		QuotaEngine engine = engine(store, BUDGET_PER_DAY, ZoneId.of("UTC"));
		Pool pool = engine.pool("openai", "gpt-4o");
		Calls.Call call = Calls.acquire(engine, pool, DEMAND);
		call.permit().refuse(true);
		call.permit().release();
		assertThat(engine.snapshot(pool).buckets().get(0).remaining()).isEqualTo(1_000_000);
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aDailyBudgetComesBackAtMidnightInItsZone(TestStores.Kind store) {
		// 12:00 UTC is 04:00 in Los Angeles: its day ends at 08:00 UTC tomorrow
		QuotaEngine engine = engine(store, BUDGET_PER_DAY, ZoneId.of("America/Los_Angeles"));
		spend(engine);
		this.clock.advance(Duration.ofHours(20).minusMinutes(1));
		assertThat(spend(engine)).as("23:59 in Los Angeles: the reset is beyond max-wait").isZero();
		this.clock.advance(Duration.ofSeconds(50));
		Calls.Call waiting = Calls.acquire(engine, engine.pool("openai", "gpt-4o"), DEMAND);
		assertThat(waiting.admitted() || waiting.error() != null).as("23:59:50: within max-wait, it waits").isFalse();
		this.clock.advance(Duration.ofSeconds(10));
		assertThat(waiting.admitted()).as("midnight in Los Angeles").isTrue();
		assertThat(waiting.waited()).isEqualTo(Duration.ofSeconds(10));
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aMonthlyBudgetComesBackOnTheFirstOfTheMonth(TestStores.Kind store) {
		QuotaEngine engine = engine(store, BUDGET_PER_MONTH, ZoneId.of("UTC"));
		spend(engine);
		this.clock.advance(Duration.ofHours(11));
		assertThat(spend(engine)).as("November 30th, 23:00").isZero();
		this.clock.advance(Duration.ofHours(1));
		assertThat(spend(engine)).as("December 1st").isEqualTo(39);
	}

	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aTokenCapStopsCallsAtItsLimitToo(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.accounting(PRICED)
			.account(limits(TOKENS_PER_DAY, 20_000))
			.model("gpt-4o", limits())
			.engine(this.stores.open(store, this.clock), this.clock);
		// each call reserves 2,000 tokens and is charged the 1,500 it used: the 14th does
		// not fit
		assertThat(spend(engine)).isEqualTo(13);
	}

	/**
	 * An embedding model at 0.02 per million tokens, each call embedding 10 tokens: 0.2
	 * millionths a call. A thousand calls cost 200 millionths, not a thousand: the books
	 * round the running total up, never each call.
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void manySmallCheapCallsAreChargedWhatTheyCostNotAMillionthEach(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.accounting(new Accounting(true, true, true, 1, new Cost(0.02, 0, 0.02)))
			.account(limits(BUDGET_PER_DAY, 1_000_000))
			.model("text-embedding-3-small", limits())
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "text-embedding-3-small");
		for (int i = 0; i < 1_000; i++) {
			Calls.acquire(engine, pool, new Demand(10, 0)).permit().complete(new Usage(10, 0, 0));
		}
		long spent = 1_000_000 - engine.snapshot(pool).bucket(BucketSpec.Scope.ACCOUNT, BUDGET_PER_DAY).remaining();
		assertThat(spent).as("millionths spent by 1,000 calls of 0.2 millionths each").isBetween(200L, 201L);
	}

	/**
	 * What yesterday's budget was charged beyond its calls' exact costs pays nothing of
	 * today's: a new day's budget is charged at least what its calls cost.
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aNewDaysBudgetIsChargedAtLeastItsCallsExactCosts(TestStores.Kind store) {
		ManualClock clock = new ManualClock(Instant.parse("2026-11-30T23:59:00Z"));
		QuotaEngine engine = TestConfigs.provider()
			.accounting(new Accounting(true, true, true, 1, new Cost(0.02, 0, 0.02)))
			.account(limits(BUDGET_PER_DAY, 1_000_000))
			.model("text-embedding-3-small", limits())
			.engine(this.stores.open(store, clock), clock);
		Pool pool = engine.pool("openai", "text-embedding-3-small");
		// yesterday: one call of 0.2 millionths, charged 1
		Calls.acquire(engine, pool, new Demand(10, 0)).permit().complete(new Usage(10, 0, 0));
		clock.advance(Duration.ofMinutes(2));
		// today: four calls of 0.2 millionths each
		for (int i = 0; i < 4; i++) {
			Calls.acquire(engine, pool, new Demand(10, 0)).permit().complete(new Usage(10, 0, 0));
		}
		long spent = 1_000_000 - engine.snapshot(pool).bucket(BucketSpec.Scope.ACCOUNT, BUDGET_PER_DAY).remaining();
		assertThat(spent).as("today's budget, after 0.8 millionths of exact costs today").isEqualTo(1);
	}

	/**
	 * A model without a price spends nothing of the budget (start-up says so): it is not
	 * refused when a priced call's usage took the budget beyond its limit.
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aModelWithoutAPriceIsNotRefusedByABudgetInDebt(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.maxWait(Duration.ofSeconds(30))
			.account(limits(BUDGET_PER_DAY, 1_000_000))
			.accounting(PRICED)
			.model("gpt-4o", limits())
			.accounting(TestConfigs.RESERVE_AND_REFUND)
			.model("free-model", limits())
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool priced = engine.pool("openai", "gpt-4o");
		Pool free = engine.pool("openai", "free-model");
		// reserved 0.04, cost 101,000 x 10 = 1.01: 0.01 in debt
		Calls.acquire(engine, priced, DEMAND).permit().complete(new Usage(101_000, 0, 0));
		assertThat(engine.snapshot(priced).bucket(BucketSpec.Scope.ACCOUNT, BUDGET_PER_DAY).remaining())
			.isEqualTo(-10_000);
		Calls.Call unpriced = Calls.acquire(engine, free, DEMAND);
		assertThat(unpriced.error()).as("a call that spends nothing of the budget").isNull();
		assertThat(unpriced.admitted()).isTrue();
		assertThat(Calls.acquire(engine, priced, DEMAND).error()).as("a priced one")
			.isInstanceOf(BudgetExhaustedException.class);
	}

	/**
	 * Calls that end without usage keep their reservation, and spend the budget as much
	 * as calls charged their usage: warn-at is told of them too.
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aBudgetSpentByCallsThatKeepTheirReservationIsWarnedOf(TestStores.Kind store) {
		QuotaEngine engine = engine(store, BUDGET_PER_DAY, ZoneId.of("UTC"));
		List<Long> warnings = new CopyOnWriteArrayList<>();
		engine.addListener(new QuotaEvents() {

			@Override
			public void budgetWarning(Account account, Dimension dimension, long spentMicros, long limitMicros,
					Instant reset) {
				warnings.add(spentMicros);
			}

		});
		Pool pool = engine.pool("openai", "gpt-4o");
		// 22 calls keeping 0.04 each: 0.88 of 1.00, past warn-at (0.8)
		for (int i = 0; i < 22; i++) {
			Calls.Call call = Calls.acquire(engine, pool, DEMAND);
			if (i % 2 == 0) {
				call.permit().release();
			}
			else {
				call.permit().complete(null);
			}
		}
		assertThat(1_000_000 - engine.snapshot(pool).bucket(BucketSpec.Scope.ACCOUNT, BUDGET_PER_DAY).remaining())
			.isEqualTo(880_000);
		Calls.settle(engine);
		assertThat(warnings).as("warned at warn-at").isNotEmpty();
	}

}
