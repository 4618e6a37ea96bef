package dev.llmquota.test.simulator;

import java.io.InputStream;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import dev.llmquota.test.simulator.clock.ManualSimClock;
import dev.llmquota.test.simulator.quota.Dimension;
import dev.llmquota.test.simulator.quota.QuotaBook;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Quota semantics the simulator enforces, driven by a manual clock.
 */
class QuotaSemanticsTests {

	private final ManualSimClock clock = new ManualSimClock();

	private ProviderSimulator simulator;

	@AfterEach
	void stop() {
		if (this.simulator != null) {
			this.simulator.close();
		}
	}

	private ProviderSimulator start(ProviderSimulatorBuilder builder) {
		this.simulator = builder.clock(this.clock).start();
		return this.simulator;
	}

	@Test
	void refusesBurstPastCapacityWithOpenAiRpmBody() {
		start(ProviderSimulator.builder().model("gpt-4o", (limits) -> limits.requestsPerMinute(5)));
		for (int i = 0; i < 5; i++) {
			assertThat(SimHttp.post(this.simulator, "/v1/chat/completions", SimHttp.openAi("gpt-4o", 10, false))
				.statusCode()).isEqualTo(200);
		}
		HttpResponse<String> refused = SimHttp.post(this.simulator, "/v1/chat/completions",
				SimHttp.openAi("gpt-4o", 10, false));
		assertThat(refused.statusCode()).isEqualTo(429);
		JsonNode error = SimHttp.json(refused).get("error");
		assertThat(error.get("type").stringValue()).isEqualTo("requests");
		assertThat(error.get("code").stringValue()).isEqualTo("rate_limit_exceeded");
		assertThat(error.get("message").stringValue())
			.contains("on requests per min (RPM): Limit 5, Used 5, Requested 1")
			// the refused request counts too, as OpenAI counts it: two requests' refill
			.contains("Please try again in 24s.");
		assertThat(refused.headers().firstValue("x-ratelimit-remaining-requests")).hasValue("0");
		assertThat(refused.headers().firstValue("x-ratelimit-reset-requests")).as("full again after six refills")
			.hasValue("1m12s");
		await().atMost(Duration.ofSeconds(5)).until(() -> this.simulator.requestLog().size() == 6);
		assertThat(this.simulator.requestLog().refused()).hasSize(1);
	}

	@Test
	void refusesBurstPastCapacityWithOpenAiTpmBody() {
		start(ProviderSimulator.builder()
			.model("gpt-4o", (limits) -> limits.tokensPerMinute(3000))
			.latency((latency) -> latency.fixedOutputTokens(1000)));
		HttpResponse<String> first = SimHttp.post(this.simulator, "/v1/chat/completions",
				SimHttp.openAi("gpt-4o", 1000, false));
		long input = SimHttp.json(first).get("usage").get("prompt_tokens").asLong();
		assertThat(first.headers().firstValue("x-ratelimit-remaining-tokens"))
			.hasValue(Long.toString(3000 - input - 1000));
		SimHttp.post(this.simulator, "/v1/chat/completions", SimHttp.openAi("gpt-4o", 1000, false));
		HttpResponse<String> refused = SimHttp.post(this.simulator, "/v1/chat/completions",
				SimHttp.openAi("gpt-4o", 1000, false));
		assertThat(refused.statusCode()).isEqualTo(429);
		JsonNode error = SimHttp.json(refused).get("error");
		assertThat(error.get("type").stringValue()).isEqualTo("tokens");
		long used = 2 * (input + 1000);
		long over = used + input + 1000 - 3000;
		assertThat(error.get("message").stringValue())
			.contains("on tokens per min (TPM): Limit 3000, Used " + used + ", Requested " + (input + 1000))
			.contains("Please try again in " + (over * 20) + "ms.");
	}

	@Test
	void refillsAtTheConfiguredRate() {
		start(ProviderSimulator.builder().model("gpt-4o", (limits) -> limits.requestsPerMinute(60)));
		for (int i = 0; i < 60; i++) {
			SimHttp.post(this.simulator, "/v1/chat/completions", SimHttp.openAi("gpt-4o", 10, false));
		}
		assertThat(this.simulator.remaining("gpt-4o", Dimension.REQUESTS_PER_MINUTE)).isZero();
		this.clock.advance(Duration.ofMillis(999));
		assertThat(this.simulator.remaining("gpt-4o", Dimension.REQUESTS_PER_MINUTE)).isZero();
		this.clock.advance(Duration.ofMillis(1));
		assertThat(status("gpt-4o")).isEqualTo(200);
		this.clock.advance(Duration.ofSeconds(10));
		assertThat(this.simulator.remaining("gpt-4o", Dimension.REQUESTS_PER_MINUTE)).isEqualTo(10);
	}

	@Test
	void anOpenAiRefusalCountsAgainstTheRequestsPerMinuteAsOpenAiDocuments() {
		start(ProviderSimulator.builder().model("gpt-4o", (limits) -> limits.requestsPerMinute(60)));
		for (int i = 0; i < 60; i++) {
			assertThat(status("gpt-4o")).isEqualTo(200);
		}
		assertThat(status("gpt-4o")).isEqualTo(429);
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(status("gpt-4o")).as("the second's refill went to the refused call").isEqualTo(429);
		this.clock.advance(Duration.ofSeconds(2));
		assertThat(status("gpt-4o")).isEqualTo(200);
	}

	@Test
	void refusalsStormingOpenAiCountNoMoreThanAMinuteOfRequests() {
		start(ProviderSimulator.builder().model("gpt-4o", (limits) -> limits.requestsPerMinute(60)));
		for (int i = 0; i < 60; i++) {
			assertThat(status("gpt-4o")).isEqualTo(200);
		}
		for (int i = 0; i < 500; i++) {
			assertThat(status("gpt-4o")).isEqualTo(429);
		}
		// 60 refusals of the storm count, not 500: a minute refills them, a second more
		// refills one request
		this.clock.advance(Duration.ofSeconds(60));
		assertThat(status("gpt-4o")).isEqualTo(429);
		this.clock.advance(Duration.ofSeconds(2));
		assertThat(status("gpt-4o")).isEqualTo(200);
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', textBlock = """
			/v1/messages                                                          | anthropic
			/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21    | openai
			""")
	void aRefusalIsFreeWhereTheProviderDocumentsNoCharge(String path, String body) {
		start(ProviderSimulator.builder().model("gpt-4o", (limits) -> limits.requestsPerMinute(60)));
		String request = body.equals("anthropic") ? SimHttp.anthropic("gpt-4o", 10, false)
				: SimHttp.openAi("gpt-4o", 10, false);
		for (int i = 0; i < 60; i++) {
			assertThat(SimHttp.post(this.simulator, path, request).statusCode()).isEqualTo(200);
		}
		assertThat(SimHttp.post(this.simulator, path, request).statusCode()).isEqualTo(429);
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(SimHttp.post(this.simulator, path, request).statusCode()).isEqualTo(200);
	}

	@Test
	void windowBoundsABurstToItsShareOfTheMinute() {
		start(ProviderSimulator.builder()
			.window(Duration.ofSeconds(10))
			.model("gpt-4o", (limits) -> limits.requestsPerMinute(60)));
		for (int i = 0; i < 10; i++) {
			assertThat(status("gpt-4o")).isEqualTo(200);
		}
		assertThat(status("gpt-4o")).isEqualTo(429);
	}

	@Test
	void reservesMaxTokensDuringAStreamAndRefundsTheRestAfter() {
		start(ProviderSimulator.builder()
			.model("gpt-4o", (limits) -> limits.tokensPerMinute(100_000))
			.latency((latency) -> latency.timeToFirstToken(Duration.ofSeconds(1))
				.perOutputToken(Duration.ofMillis(10))
				.fixedOutputTokens(40)));
		CompletableFuture<HttpResponse<InputStream>> call = SimHttp.open(this.simulator, "/v1/chat/completions",
				SimHttp.openAi("gpt-4o", 1000, true));
		HttpResponse<InputStream> response = call.join();
		long remainingAtAdmission = Long.parseLong(response.headers().firstValue("x-ratelimit-remaining-tokens").get());
		long input = 100_000 - 1000 - remainingAtAdmission;
		assertThat(input).isBetween(1L, 30L);
		assertThat(this.simulator.remaining("gpt-4o", Dimension.TOKENS_PER_MINUTE)).isEqualTo(remainingAtAdmission);
		this.clock.advance(Duration.ofSeconds(2));
		String body = SimHttp.readAll(response);
		assertThat(body).contains("\"completion_tokens\":40").endsWith("data: [DONE]\n\n");
		await().atMost(Duration.ofSeconds(5)).until(() -> this.simulator.requestLog().size() == 1);
		// the refill of the two seconds that passed is capped by nothing: 100000/60 per s
		long refill = 2 * 100_000 / 60;
		assertThat(this.simulator.remaining("gpt-4o", Dimension.TOKENS_PER_MINUTE))
			.isEqualTo(Math.min(100_000, remainingAtAdmission + 1000 - 40 + refill));
	}

	@Test
	void refundIsVisibleWithoutRefill() {
		start(ProviderSimulator.builder()
			.model("gpt-4o", (limits) -> limits.tokensPerMinute(100_000))
			.latency((latency) -> latency.fixedOutputTokens(40)));
		HttpResponse<String> response = SimHttp.post(this.simulator, "/v1/chat/completions",
				SimHttp.openAi("gpt-4o", 1000, false));
		long input = SimHttp.json(response).get("usage").get("prompt_tokens").asLong();
		assertThat(response.headers().firstValue("x-ratelimit-remaining-tokens"))
			.hasValue(Long.toString(100_000 - input - 1000));
		await().atMost(Duration.ofSeconds(5)).until(() -> this.simulator.requestLog().size() == 1);
		assertThat(this.simulator.remaining("gpt-4o", Dimension.TOKENS_PER_MINUTE)).isEqualTo(100_000 - input - 40);
	}

	@Test
	void holdsConcurrencyUntilTheLastByteOfAStream() {
		start(ProviderSimulator.builder()
			.model("gpt-4o", (limits) -> limits.concurrentRequests(1))
			.latency((latency) -> latency.timeToFirstToken(Duration.ofSeconds(1)).fixedOutputTokens(5)));
		HttpResponse<InputStream> streaming = SimHttp
			.open(this.simulator, "/v1/chat/completions", SimHttp.openAi("gpt-4o", 100, true))
			.join();
		assertThat(streaming.statusCode()).isEqualTo(200);
		CompletableFuture<HttpResponse<InputStream>> second = SimHttp.open(this.simulator, "/v1/chat/completions",
				SimHttp.openAi("gpt-4o", 100, true));
		assertThat(second.join().statusCode()).isEqualTo(429);
		assertThat(this.simulator.remaining("gpt-4o", Dimension.CONCURRENT_REQUESTS)).isZero();
		this.clock.advance(Duration.ofSeconds(1));
		SimHttp.readAll(streaming);
		await().atMost(Duration.ofSeconds(5))
			.until(() -> this.simulator.remaining("gpt-4o", Dimension.CONCURRENT_REQUESTS) == 1);
		CompletableFuture<HttpResponse<InputStream>> third = SimHttp.open(this.simulator, "/v1/chat/completions",
				SimHttp.openAi("gpt-4o", 100, true));
		assertThat(third.join().statusCode()).isEqualTo(200);
	}

	@Test
	void refusesPastTheDailyCapUntilMidnight() {
		start(ProviderSimulator.builder().model("gpt-4o", (limits) -> limits.requestsPerDay(2)));
		assertThat(status("gpt-4o")).isEqualTo(200);
		assertThat(status("gpt-4o")).isEqualTo(200);
		HttpResponse<String> refused = SimHttp.post(this.simulator, "/v1/chat/completions",
				SimHttp.openAi("gpt-4o", 10, false));
		assertThat(refused.statusCode()).isEqualTo(429);
		assertThat(SimHttp.json(refused).get("error").get("message").stringValue())
			.contains("on requests per day (RPD)")
			.contains("Please try again in 24h0m0s.");
		this.clock.advance(Duration.ofDays(1));
		assertThat(status("gpt-4o")).isEqualTo(200);
	}

	@Test
	void admitsOnlyWhenTheAccountHasRoomToo() {
		start(ProviderSimulator.builder()
			.account((limits) -> limits.requestsPerMinute(3))
			.defaultModel((limits) -> limits.requestsPerMinute(100)));
		assertThat(status("gpt-4o")).isEqualTo(200);
		assertThat(status("gpt-4o-mini")).isEqualTo(200);
		assertThat(status("gpt-4.1")).isEqualTo(200);
		assertThat(status("gpt-4o")).isEqualTo(429);
		// an OpenAI refusal counts against the model's per-minute requests too
		assertThat(this.simulator.remaining("gpt-4o", Dimension.REQUESTS_PER_MINUTE)).isEqualTo(98);
		assertThat(this.simulator.remaining(QuotaBook.ACCOUNT, Dimension.REQUESTS_PER_MINUTE)).isZero();
	}

	@Test
	void metersAnthropicOutputInRealTimeByDefault() {
		start(ProviderSimulator.builder()
			.model("claude-sonnet-4-5", (limits) -> limits.outputTokensPerMinute(8000).inputTokensPerMinute(30_000))
			.latency((latency) -> latency.fixedOutputTokens(150)));
		HttpResponse<String> response = SimHttp.post(this.simulator, "/v1/messages",
				SimHttp.anthropic("claude-sonnet-4-5", 2000, false));
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.headers().firstValue("anthropic-ratelimit-output-tokens-remaining")).hasValue("8000");
		await().atMost(Duration.ofSeconds(5)).until(() -> this.simulator.requestLog().size() == 1);
		assertThat(this.simulator.remaining("claude-sonnet-4-5", Dimension.OUTPUT_TOKENS_PER_MINUTE))
			.isEqualTo(8000 - 150);
	}

	@Test
	void reservesAnthropicOutputWhenSwitchedToTheOlderPolicy() {
		start(ProviderSimulator.builder()
			.outputPolicy("anthropic", dev.llmquota.test.simulator.quota.OutputPolicy.RESERVE_AND_REFUND)
			.model("claude-sonnet-4-5", (limits) -> limits.outputTokensPerMinute(8000))
			.latency((latency) -> latency.fixedOutputTokens(150)));
		HttpResponse<String> response = SimHttp.post(this.simulator, "/v1/messages",
				SimHttp.anthropic("claude-sonnet-4-5", 2000, false));
		assertThat(response.headers().firstValue("anthropic-ratelimit-output-tokens-remaining")).hasValue("6000");
	}

	@Test
	void sharedTeamSpendingSlowerThanTheRefillLeavesAFullBucketFull() {
		start(ProviderSimulator.builder()
			.account((limits) -> limits.tokensPerMinute(60_000))
			.sharedTeam("other-team-model", 0, 30_000));
		assertThat(this.simulator.remaining(QuotaBook.ACCOUNT, Dimension.TOKENS_PER_MINUTE)).isEqualTo(60_000);
		this.clock.advance(Duration.ofSeconds(10));
		assertThat(this.simulator.remaining(QuotaBook.ACCOUNT, Dimension.TOKENS_PER_MINUTE)).isEqualTo(60_000);
	}

	@Test
	void sharedTeamSpendingFasterThanTheRefillLowersRemainingQuotaOverTime() {
		start(ProviderSimulator.builder()
			.account((limits) -> limits.tokensPerMinute(60_000))
			.sharedTeam("other-team-model", 0, 90_000));
		this.clock.advance(Duration.ofSeconds(10));
		assertThat(this.simulator.remaining(QuotaBook.ACCOUNT, Dimension.TOKENS_PER_MINUTE)).isEqualTo(55_000);
	}

	@Test
	void callInFlightAcrossAResetDoesNotFreeTheSlotOfACallAdmittedAfterIt() {
		start(ProviderSimulator.builder()
			.model("gpt-4o", (limits) -> limits.concurrentRequests(1))
			.latency((latency) -> latency.timeToFirstToken(Duration.ofSeconds(1)).fixedOutputTokens(5)));
		HttpResponse<InputStream> before = SimHttp
			.open(this.simulator, "/v1/chat/completions", SimHttp.openAi("gpt-4o", 100, true))
			.join();
		assertThat(before.statusCode()).isEqualTo(200);
		this.clock.advance(Duration.ofMillis(500));
		this.simulator.reset();
		HttpResponse<InputStream> after = SimHttp
			.open(this.simulator, "/v1/chat/completions", SimHttp.openAi("gpt-4o", 100, true))
			.join();
		assertThat(after.statusCode()).isEqualTo(200);
		this.clock.advance(Duration.ofMillis(500));
		assertThat(SimHttp.readAll(before)).endsWith("data: [DONE]\n\n");
		assertThat(status("gpt-4o")).isEqualTo(429);
		this.clock.advance(Duration.ofMillis(500));
		assertThat(SimHttp.readAll(after)).endsWith("data: [DONE]\n\n");
		HttpResponse<InputStream> third = SimHttp
			.open(this.simulator, "/v1/chat/completions", SimHttp.openAi("gpt-4o", 100, true))
			.join();
		assertThat(third.statusCode()).isEqualTo(200);
		this.clock.advance(Duration.ofSeconds(1));
		SimHttp.readAll(third);
		await().atMost(Duration.ofSeconds(5)).until(() -> this.simulator.requestLog().size() == 3);
		assertThat(this.simulator.requestLog().records())
			.allSatisfy((record) -> assertThat(record.arrivalNanos()).isGreaterThanOrEqualTo(500_000_000L));
	}

	@Test
	void shortWindowReportsRemainingAndUsedInPerMinuteUnits() {
		start(ProviderSimulator.builder()
			.window(Duration.ofSeconds(10))
			.model("gpt-4o", (limits) -> limits.requestsPerMinute(60).tokensPerMinute(30_000))
			.latency((latency) -> latency.fixedOutputTokens(100_000)));
		assertThat(this.simulator.remaining("gpt-4o", Dimension.TOKENS_PER_MINUTE)).isEqualTo(30_000);
		HttpResponse<String> first = SimHttp.post(this.simulator, "/v1/chat/completions",
				SimHttp.openAi("gpt-4o", 3000, false));
		long input = SimHttp.json(first).get("usage").get("prompt_tokens").asLong();
		assertThat(first.headers().firstValue("x-ratelimit-limit-requests")).hasValue("60");
		assertThat(first.headers().firstValue("x-ratelimit-remaining-requests")).hasValue("54");
		assertThat(first.headers().firstValue("x-ratelimit-remaining-tokens"))
			.hasValue(Long.toString(30_000 - 6 * (input + 3000)));
		HttpResponse<String> refused = SimHttp.post(this.simulator, "/v1/chat/completions",
				SimHttp.openAi("gpt-4o", 3000, false));
		assertThat(refused.statusCode()).isEqualTo(429);
		long remaining = Long.parseLong(refused.headers().firstValue("x-ratelimit-remaining-tokens").get());
		assertThat(remaining).isEqualTo(30_000 - 6 * (input + 3000));
		assertThat(SimHttp.json(refused).at("/error/message").stringValue())
			.contains("Limit 30000, Used " + (30_000 - remaining) + ", Requested " + (input + 3000) + ".");
	}

	@Test
	void callLargerThanTheWindowButWithinTheMinuteIsAdmittedAndLaterCallsWait() {
		start(ProviderSimulator.builder()
			.window(Duration.ofSeconds(10))
			.model("gpt-4o", (limits) -> limits.tokensPerMinute(30_000))
			.latency((latency) -> latency.fixedOutputTokens(100_000)));
		HttpResponse<String> large = SimHttp.post(this.simulator, "/v1/chat/completions",
				SimHttp.openAi("gpt-4o", 6000, false));
		assertThat(large.statusCode()).isEqualTo(200);
		assertThat(large.headers().firstValue("x-ratelimit-remaining-tokens")).hasValue("0");
		HttpResponse<String> waits = SimHttp.post(this.simulator, "/v1/chat/completions",
				SimHttp.openAi("gpt-4o", 10, false));
		assertThat(waits.statusCode()).isEqualTo(429);
		assertThat(SimHttp.json(waits).at("/error/message").stringValue()).startsWith("Rate limit reached");
		this.clock.advance(Duration.ofSeconds(3));
		assertThat(status("gpt-4o")).isEqualTo(200);
		HttpResponse<String> never = SimHttp.post(this.simulator, "/v1/chat/completions",
				SimHttp.openAi("gpt-4o", 30_000, false));
		assertThat(never.statusCode()).isEqualTo(429);
		assertThat(SimHttp.json(never).at("/error/message").stringValue()).startsWith("Request too large");
	}

	@Test
	void flagsOverLimitCallsWithoutRefusingWhenEnforcementIsOff() {
		start(ProviderSimulator.builder().enforce(false).model("gpt-4o", (limits) -> limits.requestsPerMinute(1)));
		assertThat(status("gpt-4o")).isEqualTo(200);
		assertThat(status("gpt-4o")).isEqualTo(200);
		await().atMost(Duration.ofSeconds(5)).until(() -> this.simulator.requestLog().size() == 2);
		assertThat(this.simulator.requestLog().overLimit()).singleElement()
			.satisfies((record) -> assertThat(record.dimension()).isEqualTo(Dimension.REQUESTS_PER_MINUTE));
		assertThat(this.simulator.requestLog().refused()).isEmpty();
	}

	private int status(String model) {
		return SimHttp.post(this.simulator, "/v1/chat/completions", SimHttp.openAi(model, 10, false)).statusCode();
	}

}
