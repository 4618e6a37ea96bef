package dev.llmquota.provider;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

import dev.llmquota.core.Dimension;
import dev.llmquota.test.fixtures.RecordedFixture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every recorded refusal, and the variants the providers document, classified by body and
 * headers rather than by status alone.
 */
@ExtendWith(OutputCaptureExtension.class)
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

	/**
	 * AWS documents ModelNotReadyException as HTTP 429 ("not ready to serve inference
	 * requests", retried by the SDK): a model still loading, not a quota of ours. It must
	 * be an overload, as the dialect's own branch for it intends, not a rate limit that
	 * holds the pool.
	 */
	@Test
	void bedrockModelNotReadyAt429IsAnOverloadNotARateLimit() {
		Answer answer = classify(DialectId.BEDROCK, 429,
				Map.of("x-amzn-errortype",
						"ModelNotReadyException:http://internal.amazon.com/coral/com.amazon.bedrock/"),
				"""
						{"message":"Model is not ready to serve inference requests. The AWS SDK will automatically retry the operation up to 5 times."}""");
		assertThat(answer.kind()).isEqualTo(Answer.Kind.OVERLOADED);
	}

	/**
	 * Google's 403 PERMISSION_DENIED for user credentials without a quota project is a
	 * configuration error: nothing is spent, and no probe will ever fix it.
	 */
	@Test
	void googleQuotaProjectNotSetIsNotASpentQuota() {
		Answer answer = classify(DialectId.GEMINI, 403, Map.of(),
				"""
						{"error":{"code":403,"message":"Your application is authenticating by using local Application Default Credentials. The aiplatform.googleapis.com API requires a quota project, which is not set by default. To learn how to set your quota project, see https://cloud.google.com/docs/authentication/adc-troubleshooting/user-creds .","status":"PERMISSION_DENIED"}}""");
		assertThat(answer.kind()).isEqualTo(Answer.Kind.PASS);
	}

	/**
	 * Anthropic's spend cap names when access resumes ("You will regain access on
	 * 2025-11-01 at 00:00 UTC.", within a month of NOW): the exhaustion lasts until then,
	 * not "unknown".
	 */
	@Test
	void anthropicSpendCapComesBackWhenTheMessageSays() {
		Answer answer = classify(DialectId.ANTHROPIC, 429, Map.of(),
				"""
						{"type":"error","error":{"type":"rate_limit_error","message":"You have reached your API usage limits: your organization has crossed its monthly API usage threshold, set based on your organization's API tier. You will regain access on 2025-11-01 at 00:00 UTC.","details":{"error_code":"enforced_spend_limit_reached"}},"request_id":"req_018EeWyXxfu5pfWkrYcMdjWG"}""");
		assertThat(answer.kind()).isEqualTo(Answer.Kind.EXHAUSTED);
		assertThat(answer.reset(NOW)).isEqualTo(Instant.parse("2025-11-01T00:00:00Z"));
	}

	/**
	 * Ollama's cloud refuses a spent session, hourly or weekly allowance with a 429 whose
	 * body says "usage limit" (the simulator's spent quota says the same): a spent quota,
	 * never retried.
	 */
	@Test
	void ollamaUsageLimitIsASpentQuota() {
		Answer answer = classify(DialectId.OLLAMA, 429, Map.of(), """
				{"error":"you've reached your weekly usage limit, please wait or upgrade to continue"}""");
		assertThat(answer.kind()).isEqualTo(Answer.Kind.EXHAUSTED);
	}

	/**
	 * Bad input never breaks a call and takes a safe default with one log line: a
	 * negative {@code retry-after} is left unread (the call backs off), and says so.
	 */
	@Test
	void anUnreadableRetryAfterIsLeftOutWithALogLine(CapturedOutput output) {
		Answer answer = classify(DialectId.OPENAI, 429, Map.of("retry-after", "-5"), """
				{"error":{"message":"Rate limit reached.","type":"requests","code":"rate_limit_exceeded"}}""");
		assertThat(answer.kind()).isEqualTo(Answer.Kind.RATE_LIMITED);
		assertThat(answer.delay()).isNull();
		assertThat(output).contains("retry-after");
	}

	/**
	 * A gateway's refusal ({@code {"message": ..., "error": "Forbidden"}}, as NestJS and
	 * Spring Boot write them) is read from its message, not its reason phrase.
	 */
	@Test
	void aGatewaysRefusalIsReadFromItsMessageNotItsReasonPhrase() {
		Answer spent = classify(DialectId.OPENAI, 403, Map.of(),
				"""
						{"statusCode":403,"message":"Monthly token quota exceeded for team ml-platform","error":"Forbidden"}""");
		assertThat(spent.kind()).isEqualTo(Answer.Kind.EXHAUSTED);
		assertThat(spent.reason()).isEqualTo("Monthly token quota exceeded for team ml-platform");
		Answer day = classify(DialectId.OPENAI, 429, Map.of(),
				"""
						{"statusCode":429,"message":"Rate limit reached for requests per day (RPD): limit 10000","error":"Too Many Requests"}""");
		assertThat(day.dimension()).isEqualTo(Dimension.REQUESTS_PER_DAY);
		assertThat(day.kind()).isEqualTo(Answer.Kind.EXHAUSTED);
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
		// header names in any case, as every HTTP stack looks them up
		Map<String, String> lower = new HashMap<>();
		headers.forEach((name, value) -> lower.put(name.toLowerCase(java.util.Locale.ROOT), value));
		return Dialect.of(dialect)
			.classify(status, (name) -> lower.get(name.toLowerCase(java.util.Locale.ROOT)), json(body), NOW);
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
