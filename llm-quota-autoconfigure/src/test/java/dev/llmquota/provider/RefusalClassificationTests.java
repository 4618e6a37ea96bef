package dev.llmquota.provider;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

import dev.llmquota.core.Dimension;
import dev.llmquota.test.fixtures.RecordedFixture;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every recorded refusal, and the variants the providers document, classified by body and
 * headers rather than by status alone.
 */
class RefusalClassificationTests {

	private static final Instant NOW = Instant.parse("2025-10-14T09:30:00Z");

	@Test
	void openAiInsufficientQuotaIsASpentAccountNeverRetried() {
		Answer answer = classify("openai-429-insufficient-quota.json", DialectId.OPENAI);
		assertThat(answer.kind()).isEqualTo(Answer.Kind.EXHAUSTED);
		assertThat(answer.wholeAccount()).isTrue();
		assertThat(answer.retryAllowed()).isFalse();
	}

	@Test
	void openAiTpmLimitWaitsWhatTheMessageSays() {
		Answer answer = classify("openai-429-tpm.json", DialectId.OPENAI);
		assertThat(answer.kind()).isEqualTo(Answer.Kind.RATE_LIMITED);
		assertThat(answer.dimension()).isEqualTo(Dimension.TOKENS_PER_MINUTE);
		assertThat(answer.delay()).isEqualTo(Duration.ofMillis(2_504));
	}

	@Test
	void azurePrefersRetryAfterMs() {
		Answer answer = classify("azure-429-retry-after.json", DialectId.AZURE_OPENAI);
		assertThat(answer.kind()).isEqualTo(Answer.Kind.RATE_LIMITED);
		assertThat(answer.dimension()).isEqualTo(Dimension.TOKENS_PER_MINUTE);
		assertThat(answer.delay()).isEqualTo(Duration.ofMillis(5_417));
	}

	@Test
	void anthropicNamesTheDimensionInItsMessageAndWaitsRetryAfter() {
		Answer answer = classify("anthropic-429-input-tokens.json", DialectId.ANTHROPIC);
		assertThat(answer.kind()).isEqualTo(Answer.Kind.RATE_LIMITED);
		assertThat(answer.dimension()).isEqualTo(Dimension.INPUT_TOKENS_PER_MINUTE);
		assertThat(answer.delay()).isEqualTo(Duration.ofSeconds(9));
	}

	@Test
	void anthropicOverloadIsNotOurQuota() {
		assertThat(classify("anthropic-529-overloaded.json", DialectId.ANTHROPIC).kind())
			.isEqualTo(Answer.Kind.OVERLOADED);
	}

	@Test
	void bedrockThrottlingIsARateLimitAndItsServiceQuotaASpentQuota() {
		Answer throttled = classify("bedrock-429-throttling.json", DialectId.BEDROCK);
		assertThat(throttled.kind()).isEqualTo(Answer.Kind.RATE_LIMITED);
		assertThat(throttled.dimension()).isEqualTo(Dimension.TOKENS_PER_MINUTE);
		assertThat(throttled.delay()).isNull();
		assertThat(classify("bedrock-quota-exceeded.json", DialectId.BEDROCK).kind()).isEqualTo(Answer.Kind.EXHAUSTED);
	}

	@Test
	void geminiPerMinuteQuotaWaitsItsRetryInfo() {
		Answer answer = classify("gemini-429-resource-exhausted.json", DialectId.GEMINI);
		assertThat(answer.kind()).isEqualTo(Answer.Kind.RATE_LIMITED);
		assertThat(answer.dimension()).isEqualTo(Dimension.REQUESTS_PER_MINUTE);
		assertThat(answer.delay()).isEqualTo(Duration.ofSeconds(33));
	}

	@Test
	void successfulAnswersPass() {
		for (String name : new String[] { "openai-200-with-headers.json", "anthropic-200-with-headers.json",
				"gemini-200-usage.json" }) {
			RecordedFixture fixture = RecordedFixture.load(name);
			assertThat(classify(fixture, dialect(fixture)).kind()).as(name).isEqualTo(Answer.Kind.PASS);
		}
	}

	@Test
	void aRateLimitWithoutAnyHeaderOrHintHasNoWait() {
		Answer answer = classify(DialectId.OPENAI, 429, Map.of(), """
				{"error":{"message":"Rate limit reached.","type":"requests","code":"rate_limit_exceeded"}}""");
		assertThat(answer.kind()).isEqualTo(Answer.Kind.RATE_LIMITED);
		assertThat(answer.dimension()).isEqualTo(Dimension.REQUESTS_PER_MINUTE);
		assertThat(answer.delay()).isNull();
	}

	/**
	 * A wait of nothing is what the provider said: kept, not replaced by a reset header's
	 * time to full refill (minutes, which would hold the pool that long); the call backs
	 * off (see ProviderLiesTests).
	 */
	@Test
	void aWaitOfNothingIsKeptNotReplacedByAResetHeader() {
		String openAi = """
				{"error":{"message":"Rate limit reached.","type":"tokens","code":"rate_limit_exceeded"}}""";
		assertThat(classify(DialectId.OPENAI, 429,
				Map.of("retry-after", "0", "x-ratelimit-remaining-tokens", "0", "x-ratelimit-reset-tokens", "6m0s"),
				openAi)
			.delay()).isEqualTo(Duration.ZERO);
		String gemini = """
				{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"Quota exceeded.","details":[
				{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[
				{"quotaId":"GenerateRequestsPerMinutePerProjectPerModel"}]},
				{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"0s"}]}}""";
		assertThat(classify(DialectId.GEMINI, 429, Map.of(), gemini).delay()).isEqualTo(Duration.ZERO);
	}

	/**
	 * Of two waits, the headers' more precise one is trusted first; a
	 * {@code retry-after-ms} of nothing beside a {@code retry-after} that names a wait
	 * says nothing the other does not (a proxy's default, a rounding): the call waits
	 * what the other names, as the official SDKs do, instead of backing off into the same
	 * limit.
	 */
	@Test
	void aRetryAfterMsOfNothingGivesWayToTheRetryAfterBesideIt() {
		String openAi = """
				{"error":{"message":"Rate limit reached.","type":"tokens","code":"rate_limit_exceeded"}}""";
		assertThat(classify(DialectId.AZURE_OPENAI, 429, Map.of("retry-after-ms", "0", "retry-after", "20"), openAi)
			.delay()).isEqualTo(Duration.ofSeconds(20));
		assertThat(classify(DialectId.OPENAI, 429, Map.of("retry-after-ms", "250", "retry-after", "1"), openAi).delay())
			.isEqualTo(Duration.ofMillis(250));
		assertThat(classify(DialectId.OPENAI, 429, Map.of("retry-after-ms", "0", "retry-after", "0"), openAi).delay())
			.isEqualTo(Duration.ZERO);
		assertThat(
				classify(DialectId.OPENAI, 429, Map.of("retry-after-ms", "soon", "retry-after", "3"), openAi).delay())
			.isEqualTo(Duration.ofSeconds(3));
	}

	@Test
	void retryAfterAsAnHttpDate() {
		Answer answer = classify(DialectId.OPENAI, 429, Map.of("retry-after", "Tue, 14 Oct 2025 09:30:12 GMT"), """
				{"error":{"message":"Rate limit reached.","type":"tokens","code":"rate_limit_exceeded"}}""");
		assertThat(answer.delay()).isEqualTo(Duration.ofSeconds(12));
	}

	@Test
	void theResetHeaderIsTheLastResort() {
		Answer answer = classify(DialectId.OPENAI, 429,
				Map.of("x-ratelimit-remaining-tokens", "0", "x-ratelimit-reset-tokens", "6m0s"), """
						{"error":{"message":"Rate limit reached.","type":"tokens","code":"rate_limit_exceeded"}}""");
		assertThat(answer.delay()).isEqualTo(Duration.ofMinutes(6));
	}

	@Test
	void aDayLongWaitIsASpentQuota() {
		Answer answer = classify(DialectId.AZURE_OPENAI, 429, Map.of("retry-after", "86400"),
				"""
						{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation have exceeded token rate limit. Please retry after 86400 seconds."}}""")
			.withThreshold(Duration.ofHours(1));
		assertThat(answer.kind()).isEqualTo(Answer.Kind.EXHAUSTED);
		assertThat(answer.reset(NOW)).isEqualTo(NOW.plus(Duration.ofDays(1)));
	}

	@Test
	void xShouldRetryFalseStopsTheRetryWithoutExhaustingAnything() {
		Answer answer = classify(DialectId.ANTHROPIC, 429, Map.of("x-should-retry", "false"), """
				{"type":"error","error":{"type":"rate_limit_error","message":"of 50 requests per minute"}}""");
		assertThat(answer.kind()).isEqualTo(Answer.Kind.RATE_LIMITED);
		assertThat(answer.retryAllowed()).isFalse();
	}

	@Test
	void anthropicSpendCapAndCreditBalanceAreSpentAccounts() {
		Answer cap = classify(DialectId.ANTHROPIC, 429, Map.of(),
				"""
						{"type":"error","error":{"type":"rate_limit_error","message":"You have reached your API usage limits.","details":{"error_code":"enforced_spend_limit_reached"}}}""");
		Answer credit = classify(DialectId.ANTHROPIC, 400, Map.of(),
				"""
						{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API."}}""");
		assertThat(cap.kind()).isEqualTo(Answer.Kind.EXHAUSTED);
		assertThat(cap.wholeAccount()).isTrue();
		assertThat(credit.kind()).isEqualTo(Answer.Kind.EXHAUSTED);
	}

	@Test
	void geminiPerDayQuotaIsSpentAndVertexSharedCapacityIsAnOverload() {
		Answer daily = classify(DialectId.GEMINI, 429, Map.of(),
				"""
						{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"quota","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]}]}}""");
		Answer shared = classify(DialectId.GEMINI, 429, Map.of(),
				"""
						{"error":{"code":429,"message":"Resource exhausted. Please try again later.","status":"RESOURCE_EXHAUSTED"}}""");
		assertThat(daily.kind()).isEqualTo(Answer.Kind.EXHAUSTED);
		assertThat(daily.dimension()).isEqualTo(Dimension.REQUESTS_PER_DAY);
		assertThat(shared.kind()).isEqualTo(Answer.Kind.OVERLOADED);
	}

	@Test
	void aPerDayViolationListedSecondStillMeansASpentDay() {
		Answer answer = classify(DialectId.GEMINI, 429, Map.of(),
				"""
						{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"quota","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerMinutePerProjectPerModel"},{"quotaId":"GenerateRequestsPerDayPerProjectPerModel"}]}]}}""");
		assertThat(answer.kind()).isEqualTo(Answer.Kind.EXHAUSTED);
	}

	@Test
	void aSpentDayComesBackWhenTheMessageSays() {
		Answer answer = classify(DialectId.OPENAI, 429, Map.of(),
				"""
						{"error":{"message":"Rate limit reached for gpt-4o on requests per day (RPD): Limit 10000, Used 10000, Requested 1. Please try again in 7m12s.","type":"requests","code":"rate_limit_exceeded"}}""");
		assertThat(answer.kind()).isEqualTo(Answer.Kind.EXHAUSTED);
		assertThat(answer.dimension()).isEqualTo(Dimension.REQUESTS_PER_DAY);
		assertThat(answer.reset(NOW)).isEqualTo(NOW.plus(Duration.ofMinutes(7).plusSeconds(12)));
	}

	@Test
	void aRequestTooLargeIsPassedThroughNotRetried() {
		Answer answer = classify(DialectId.OPENAI, 429, Map.of(),
				"""
						{"error":{"message":"Request too large for gpt-5-nano in organization org-test on tokens per min (TPM): Limit 200000, Requested 480002.","type":"tokens","code":"rate_limit_exceeded"}}""");
		assertThat(answer.kind()).isEqualTo(Answer.Kind.TOO_LARGE);
	}

	@Test
	void anUnreadable429IsARateLimitOnAnUnknownDimension() {
		Answer answer = classify(DialectId.OLLAMA, 429, Map.of("retry-after", "3"), "<html>slow down</html>");
		assertThat(answer.kind()).isEqualTo(Answer.Kind.RATE_LIMITED);
		assertThat(answer.dimension()).isNull();
		assertThat(answer.delay()).isEqualTo(Duration.ofSeconds(3));
	}

	@Test
	void aQuota403IsSpentAndOtherAnswersPass() {
		assertThat(classify(DialectId.OPENAI, 403, Map.of(), "{\"error\":{\"message\":\"Out of call volume quota.\"}}")
			.kind()).isEqualTo(Answer.Kind.EXHAUSTED);
		assertThat(classify(DialectId.OPENAI, 401, Map.of(), "{\"error\":{\"message\":\"bad key\"}}").kind())
			.isEqualTo(Answer.Kind.PASS);
		assertThat(classify(DialectId.OPENAI, 503, Map.of(), "").kind()).isEqualTo(Answer.Kind.OVERLOADED);
	}

	private static Answer classify(String name, DialectId dialect) {
		return classify(RecordedFixture.load(name), dialect);
	}

	private static Answer classify(RecordedFixture fixture, DialectId dialect) {
		Map<String, String> headers = new HashMap<>();
		fixture.headers().forEach((name, value) -> headers.put(name.toLowerCase(java.util.Locale.ROOT), value));
		Instant date = Durations.httpDate(fixture.headers().get("date"));
		return Dialect.of(dialect)
			.classify(fixture.status(), (name) -> headers.get(name.toLowerCase(java.util.Locale.ROOT)),
					json(fixture.body()), (date != null) ? date : NOW);
	}

	private static Answer classify(DialectId dialect, int status, Map<String, String> headers, String body) {
		return Dialect.of(dialect).classify(status, headers::get, json(body), NOW);
	}

	private static JsonNode json(String body) {
		try {
			return JsonMapper.shared().readTree(body);
		}
		catch (RuntimeException ex) {
			return null;
		}
	}

	private static DialectId dialect(RecordedFixture fixture) {
		return switch (fixture.provider()) {
			case "openai" -> DialectId.OPENAI;
			case "anthropic" -> DialectId.ANTHROPIC;
			default -> DialectId.GEMINI;
		};
	}

}
