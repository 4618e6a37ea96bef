package dev.llmquota.test.simulator.quota;

import java.time.Duration;
import java.time.ZoneOffset;
import java.util.Map;

import dev.llmquota.test.simulator.clock.ManualSimClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The books on their own: shared teams, resets with calls in flight, and windows shorter
 * than a minute.
 */
class QuotaBookTests {

	private final ManualSimClock clock = new ManualSimClock();

	private QuotaBook book(Duration window, Limits account, Limits model) {
		return new QuotaBook(this.clock, window, ZoneOffset.UTC, account, Map.of("gpt-4o", model), Limits.unlimited());
	}

	private long remaining(QuotaBook book, String scope, Dimension dimension) {
		return book.scopeStates(scope).get(dimension).remaining();
	}

	@ParameterizedTest(name = "team {0}/min, client took {1}, read every {2}s, after {3}s: {4}")
	@CsvSource(textBlock = """
			30000,     0,   1, 300, 60000
			30000,     0,  10, 300, 60000
			30000,     0,  60, 300, 60000
			30000,     0, 300, 300, 60000
			90000,     0,   1,  60, 30000
			90000,     0,  10,  60, 30000
			90000,     0,  60,  60, 30000
			90000,     0,  60, 180,     0
			30000, 60000,   1, 120, 60000
			30000, 60000,  10, 120, 60000
			30000, 60000,  60, 120, 60000
			""")
	void sharedTeamSpendingDoesNotDependOnHowOftenTheBooksAreRead(long teamRate, long clientTakes, int everySeconds,
			int afterSeconds, long expected) {
		QuotaBook book = book(Duration.ofMinutes(1), Limits.builder().tokensPerMinute(60_000).build(),
				Limits.unlimited());
		book.addTeam("other-team-model", 0, teamRate);
		if (clientTakes > 0) {
			assertThat(book.admit("gpt-4o", clientTakes, 0, OutputPolicy.REAL_TIME, true).admitted()).isTrue();
		}
		for (int elapsed = 0; elapsed < afterSeconds; elapsed += everySeconds) {
			this.clock.advance(Duration.ofSeconds(everySeconds));
			book.scopeStates(QuotaBook.ACCOUNT);
		}
		assertThat(remaining(book, QuotaBook.ACCOUNT, Dimension.TOKENS_PER_MINUTE)).isEqualTo(expected);
	}

	@Test
	void sharedTeamStillSpendsPerDayCapsAsItGoes() {
		QuotaBook book = book(Duration.ofMinutes(1), Limits.builder().tokensPerDay(1_000_000).build(),
				Limits.unlimited());
		book.addTeam("gpt-4o", 0, 30_000);
		this.clock.advance(Duration.ofMinutes(10));
		assertThat(remaining(book, QuotaBook.ACCOUNT, Dimension.TOKENS_PER_DAY)).isEqualTo(700_000);
	}

	@Test
	void sharedTeamLowersTheRequestRefillOfItsModelsPool() {
		QuotaBook book = book(Duration.ofMinutes(1), Limits.unlimited(),
				Limits.builder().requestsPerMinute(60).build());
		book.addTeam("gpt-4o", 30, 0);
		for (int i = 0; i < 60; i++) {
			assertThat(book.admit("gpt-4o", 1, 1, OutputPolicy.RESERVE_AND_REFUND, true).admitted()).isTrue();
		}
		this.clock.advance(Duration.ofSeconds(10));
		assertThat(remaining(book, "gpt-4o", Dimension.REQUESTS_PER_MINUTE)).isEqualTo(5);
	}

	@Test
	void callAdmittedBeforeAResetNeitherReleasesNorRefundsIntoTheNewBooks() {
		QuotaBook book = book(Duration.ofMinutes(1), Limits.unlimited(),
				Limits.builder().concurrentRequests(1).tokensPerMinute(1000).build());
		Admission before = book.admit("gpt-4o", 10, 490, OutputPolicy.RESERVE_AND_REFUND, true);
		assertThat(before.admitted()).isTrue();
		book.reset();
		Admission after = book.admit("gpt-4o", 10, 490, OutputPolicy.RESERVE_AND_REFUND, true);
		assertThat(after.admitted()).isTrue();
		book.chargeProduced(before, 100);
		book.settle(before, 0);
		book.release(before);
		assertThat(remaining(book, "gpt-4o", Dimension.TOKENS_PER_MINUTE)).isEqualTo(500);
		Admission third = book.admit("gpt-4o", 10, 10, OutputPolicy.RESERVE_AND_REFUND, true);
		assertThat(third.admitted()).isFalse();
		assertThat(third.violation().dimension()).isEqualTo(Dimension.CONCURRENT_REQUESTS);
		book.release(after);
		assertThat(book.admit("gpt-4o", 10, 10, OutputPolicy.RESERVE_AND_REFUND, true).admitted()).isTrue();
	}

	@Test
	void idleBucketReportsTheWholePerMinuteLimitWhateverTheWindow() {
		QuotaBook book = book(Duration.ofSeconds(10), Limits.unlimited(),
				Limits.builder().requestsPerMinute(60).tokensPerMinute(30_000).build());
		assertThat(remaining(book, "gpt-4o", Dimension.REQUESTS_PER_MINUTE)).isEqualTo(60);
		assertThat(remaining(book, "gpt-4o", Dimension.TOKENS_PER_MINUTE)).isEqualTo(30_000);
		book.admit("gpt-4o", 1000, 0, OutputPolicy.REAL_TIME, true);
		// the bucket holds 5,000 of which 4,000 are left: four fifths of the
		// minute's limit
		assertThat(remaining(book, "gpt-4o", Dimension.TOKENS_PER_MINUTE)).isEqualTo(24_000);
		assertThat(remaining(book, "gpt-4o", Dimension.REQUESTS_PER_MINUTE)).isEqualTo(54);
	}

	@Test
	void refusalQuotesUsedInPerMinuteUnits() {
		QuotaBook book = book(Duration.ofSeconds(10), Limits.unlimited(),
				Limits.builder().tokensPerMinute(30_000).build());
		book.admit("gpt-4o", 4000, 0, OutputPolicy.REAL_TIME, true);
		Admission refused = book.admit("gpt-4o", 4000, 0, OutputPolicy.REAL_TIME, true);
		assertThat(refused.admitted()).isFalse();
		assertThat(refused.violation().limit()).isEqualTo(30_000);
		assertThat(refused.violation().used()).isEqualTo(24_000);
		assertThat(refused.violation().retryAfter()).isEqualTo(Duration.ofSeconds(6));
	}

	@Test
	void callLargerThanTheWindowButNotTheMinuteIsAdmittedIntoDebtWhenTheBucketIsFull() {
		QuotaBook book = book(Duration.ofSeconds(10), Limits.unlimited(),
				Limits.builder().tokensPerMinute(30_000).build());
		book.admit("gpt-4o", 100, 0, OutputPolicy.REAL_TIME, true);
		Admission notFull = book.admit("gpt-4o", 6000, 0, OutputPolicy.REAL_TIME, true);
		assertThat(notFull.admitted()).isFalse();
		assertThat(notFull.violation().tooLarge()).isFalse();
		assertThat(notFull.violation().retryAfter()).isEqualTo(Duration.ofMillis(200));
		this.clock.advance(Duration.ofMillis(200));
		assertThat(book.admit("gpt-4o", 6000, 0, OutputPolicy.REAL_TIME, true).admitted()).isTrue();
		assertThat(remaining(book, "gpt-4o", Dimension.TOKENS_PER_MINUTE)).isZero();
		Admission inDebt = book.admit("gpt-4o", 100, 0, OutputPolicy.REAL_TIME, true);
		assertThat(inDebt.admitted()).isFalse();
		assertThat(inDebt.violation().retryAfter()).isEqualTo(Duration.ofMillis(2200));
		Admission tooLarge = book.admit("gpt-4o", 30_001, 0, OutputPolicy.REAL_TIME, true);
		assertThat(tooLarge.violation().tooLarge()).isTrue();
	}

}
