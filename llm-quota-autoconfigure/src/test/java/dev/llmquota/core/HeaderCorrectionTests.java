package dev.llmquota.core;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;

import dev.llmquota.provider.Dialect;
import dev.llmquota.provider.DialectId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static dev.llmquota.core.BucketSpec.Scope.POOL;
import static dev.llmquota.core.Calls.acquire;
import static dev.llmquota.core.Dimension.INPUT_TOKENS_PER_MINUTE;
import static dev.llmquota.core.Dimension.REQUESTS_PER_MINUTE;
import static dev.llmquota.core.Dimension.TOKENS_PER_MINUTE;
import static dev.llmquota.core.TestConfigs.limits;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Corrections from a provider's rate-limit headers, driven by a manual clock.
 */
class HeaderCorrectionTests {

	private final ManualClock clock = new ManualClock();

	private final TestStores stores = new TestStores();

	@AfterEach
	void closeStores() {
		this.stores.close();
	}

	/**
	 * A long call's answer carries headers the provider wrote when it admitted the call
	 * (the simulator does the same: states at arrival, sent after generation). Anthropic
	 * says when its bucket is full again; when that instant is before the answer's own
	 * Date, its "remaining" says nothing about now and must not lower the books.
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aReportWhoseResetHasPassedDoesNotLowerTheBooks(TestStores.Kind store) {
		QuotaEngine engine = claudesInputBucket(store);
		Pool pool = engine.pool("openai", "claude");
		Instant sent = this.clock.instant();
		Calls.Call longCall = acquire(engine, pool, new Demand(1_000, 0));
		assertThat(longCall.admitted()).isTrue();
		// the answer comes 90 s later; its headers say the bucket was empty at 12:00:00
		// and full again at 12:01:00, 30 s ago
		this.clock.advance(Duration.ofSeconds(90));
		Map<String, String> headers = emptyAtAndFullAMinuteLater(sent);
		List<ServerLimit> reports = Dialect.of(DialectId.ANTHROPIC).rateLimits(headers::get, this.clock.instant());
		engine.observe(pool, reports);
		longCall.permit().complete(new Usage(1_000, 0, 0));
		assertThat(remaining(engine, pool, INPUT_TOKENS_PER_MINUTE))
			.as("the provider's bucket has been full for 30 s; ours had refilled to its capacity")
			.isEqualTo(40_000);
		assertThat(acquire(engine, pool, new Demand(1_000, 0)).admitted())
			.as("a call the provider has room for starts at once")
			.isTrue();
	}

	/**
	 * Anthropic's reset is given to the second: a requests bucket one call below full
	 * (999 of 1000, full again within 60 ms) reads reset = the answer's Date. The
	 * captured header set of the fixture anthropic-200-with-headers.json: the pool still
	 * learns its requests-per-minute limit from it.
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aFreshReportWhoseResetIsTheAnswersOwnSecondIsTakenIn(TestStores.Kind store) {
		ManualClock at = new ManualClock(Instant.parse("2025-10-14T09:21:07.400Z"));
		QuotaEngine engine = TestConfigs.provider().inFlightGate(false).engine(this.stores.open(store, at), at);
		Pool pool = engine.pool("openai", "claude-sonnet-4-5");
		Map<String, String> headers = Map.of("date", "Tue, 14 Oct 2025 09:21:07 GMT",
				"anthropic-ratelimit-requests-limit", "1000", "anthropic-ratelimit-requests-remaining", "999",
				"anthropic-ratelimit-requests-reset", "2025-10-14T09:21:07Z", "anthropic-ratelimit-input-tokens-limit",
				"450000", "anthropic-ratelimit-input-tokens-remaining", "448000",
				"anthropic-ratelimit-input-tokens-reset", "2025-10-14T09:21:08Z");
		List<ServerLimit> reports = Dialect.of(DialectId.ANTHROPIC).rateLimits(headers::get, at.instant());
		engine.observe(pool, reports);
		engine.awaitQuiet();
		assertThat(pool.limits().asMap()).as("limits learned from the answer's headers")
			.containsEntry(Dimension.INPUT_TOKENS_PER_MINUTE, 450_000L)
			.containsEntry(REQUESTS_PER_MINUTE, 1_000L);
	}

	/**
	 * A long call's headers, written when it was admitted (0 of 50,000 left, full at
	 * 12:01:00), arrive at 12:00:30 with the reset still ahead: Anthropic's bucket, which
	 * refills continuously, holds half its limit by then, and the report says so through
	 * its own reset and Date. Taken as written, it put the books 10,000 in debt and held
	 * every call for room the provider had.
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aLongCallsReportWhoseResetIsStillAheadCountsTheRefillSinceItWasWritten(TestStores.Kind store) {
		QuotaEngine engine = claudesInputBucket(store);
		Pool pool = engine.pool("openai", "claude");
		Instant sent = this.clock.instant();
		Calls.Call longCall = acquire(engine, pool, new Demand(1_000, 0));
		assertThat(longCall.admitted()).isTrue();
		this.clock.advance(Duration.ofSeconds(30));
		Map<String, String> headers = emptyAtAndFullAMinuteLater(sent);
		engine.observe(pool, Dialect.of(DialectId.ANTHROPIC).rateLimits(headers::get, this.clock.instant()));
		longCall.permit().complete(new Usage(1_000, 0, 0));
		assertThat(remaining(engine, pool, INPUT_TOKENS_PER_MINUTE))
			.as("about 25,000 at the provider now, less the 10,000 kept for others")
			.isBetween(10_000L, 16_000L);
		assertThat(acquire(engine, pool, new Demand(1_000, 0)).admitted()).as("a call the provider has room for")
			.isTrue();
	}

	/**
	 * Groq's x-ratelimit-*-requests count a day (14,400 requests), under OpenAI's names:
	 * read as a minute's, they taught a requests-per-minute limit of 14,400 and, late in
	 * the day (2,000 left, full again in hours), held every call. A report whose reset is
	 * further away than a minute's window can be is not a minute's.
	 */
	@ParameterizedTest
	@EnumSource(TestStores.Kind.class)
	void aReportWhoseResetIsBeyondAMinuteIsNotTakenForAMinutesLimit(TestStores.Kind store) {
		QuotaEngine engine = TestConfigs.provider()
			.headroom(0.8)
			.inFlightGate(false)
			.engine(this.stores.open(store, this.clock), this.clock);
		Pool pool = engine.pool("openai", "llama-3.3-70b-versatile");
		Map<String, String> groq = Map.of("x-ratelimit-limit-requests", "14400", "x-ratelimit-remaining-requests",
				"2000", "x-ratelimit-reset-requests", "20h40m", "x-ratelimit-limit-tokens", "18000",
				"x-ratelimit-remaining-tokens", "18000", "x-ratelimit-reset-tokens", "0s");
		engine.observe(pool, Dialect.of(DialectId.OPENAI).rateLimits(groq::get, this.clock.instant()));
		engine.awaitQuiet();
		assertThat(pool.limits().asMap()).as("a day's requests are not a minute's")
			.doesNotContainKey(REQUESTS_PER_MINUTE)
			.containsEntry(TOKENS_PER_MINUTE, 18_000L);
		assertThat(acquire(engine, pool, new Demand(500, 200)).admitted())
			.as("2,000 requests left today and a full minute of tokens")
			.isTrue();
	}

	/**
	 * The headers of an answer sent now, written when the call was admitted at
	 * {@code sent}: no input token left then, full again a minute after.
	 */
	private Map<String, String> emptyAtAndFullAMinuteLater(Instant sent) {
		return Map.of("anthropic-ratelimit-input-tokens-limit", "50000", "anthropic-ratelimit-input-tokens-remaining",
				"0", "anthropic-ratelimit-input-tokens-reset", sent.plusSeconds(60).toString(), "date",
				DateTimeFormatter.RFC_1123_DATE_TIME.format(this.clock.instant().atZone(ZoneOffset.UTC)));
	}

	/** Anthropic's input tokens, 50,000 a minute, a fifth kept for others. */
	private QuotaEngine claudesInputBucket(TestStores.Kind store) {
		return TestConfigs.provider()
			.headroom(0.8)
			.burstWindow(Duration.ofSeconds(60))
			.inFlightGate(false)
			.model("claude", limits(INPUT_TOKENS_PER_MINUTE, 50_000))
			.engine(this.stores.open(store, this.clock), this.clock);
	}

	private long remaining(QuotaEngine engine, Pool pool, Dimension dimension) {
		engine.awaitQuiet();
		return engine.snapshot(pool).bucket(POOL, dimension).remaining();
	}

}
