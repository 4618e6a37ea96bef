package dev.llmquota.test.simulator;

import java.io.InputStream;
import java.net.http.HttpResponse;
import java.time.Duration;

import dev.llmquota.test.simulator.clock.ManualSimClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Refusals that tell a client whether waiting helps, and which quota said no.
 */
class RefusalTests {

	private static final String GEMINI = "/v1beta/models/gemini-2.5-flash:generateContent";

	private final ManualSimClock clock = new ManualSimClock();

	private ProviderSimulator simulator;

	@AfterEach
	void stop() {
		if (this.simulator != null) {
			this.simulator.close();
		}
	}

	private void start(ProviderSimulatorBuilder builder) {
		this.simulator = builder.clock(this.clock).start();
	}

	@Test
	void aRateLimitedFaultRefusesTheCallWithTheDialectsRefusalAndMetersNothing() {
		start(ProviderSimulator.builder().model("gemini-2.5-flash", (limits) -> limits.requestsPerMinute(60)));
		this.simulator.faults().rateLimitWait(Duration.ofMillis(250)).next(Fault.RATE_LIMITED);
		HttpResponse<String> refused = SimHttp.post(this.simulator, GEMINI, SimHttp.gemini(10));
		assertThat(refused.statusCode()).isEqualTo(429);
		assertThat(SimHttp.json(refused).get("error").get("status").stringValue()).isEqualTo("RESOURCE_EXHAUSTED");
		assertThat(refused.body()).contains("Please retry in 0.25s");
		assertThat(this.simulator.requestLog().refused()).hasSize(1);
		// nothing was metered: the next call finds the whole quota
		assertThat(SimHttp.post(this.simulator, GEMINI, SimHttp.gemini(10)).statusCode()).isEqualTo(200);
	}

	@Test
	void azureAnswersACallThatCanNeverFitWithANonRetryable400() {
		start(ProviderSimulator.builder().model("gpt-4o", (limits) -> limits.tokensPerMinute(1000)));
		HttpResponse<String> response = SimHttp.post(this.simulator,
				"/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21",
				SimHttp.openAi("ignored", 5000, false));
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.headers().firstValue("retry-after")).isEmpty();
		JsonNode error = SimHttp.json(response).get("error");
		assertThat(error.get("code").stringValue()).isEqualTo("request_too_large");
		assertThat(error.get("message").stringValue())
			.startsWith("Request too large for gpt-4o on tokens per min (TPM): Limit 1000, Requested ");
	}

	@Test
	void geminiAnswersACallThatCanNeverFitWithInvalidArgument() {
		// Gemini meters output as it is produced, so only the input can make a
		// call too large
		start(ProviderSimulator.builder().model("gemini-2.5-flash", (limits) -> limits.tokensPerMinute(5)));
		HttpResponse<String> response = SimHttp.post(this.simulator, GEMINI, SimHttp.gemini(100));
		assertThat(response.statusCode()).isEqualTo(400);
		JsonNode error = SimHttp.json(response).get("error");
		assertThat(error.get("status").stringValue()).isEqualTo("INVALID_ARGUMENT");
		assertThat(error.get("message").stringValue()).contains("limit is 5 ").doesNotContain("retry");
		assertThat(error.has("details")).isFalse();
	}

	@Test
	void geminiNamesOutputTokenQuotaInItsRefusal() {
		start(ProviderSimulator.builder()
			.model("gemini-2.5-flash", (limits) -> limits.outputTokensPerMinute(100).inputTokensPerMinute(10_000))
			.latency((latency) -> latency.fixedOutputTokens(100)));
		assertThat(SimHttp.post(this.simulator, GEMINI, SimHttp.gemini(1000)).statusCode()).isEqualTo(200);
		HttpResponse<String> refused = SimHttp.post(this.simulator, GEMINI, SimHttp.gemini(1000));
		assertThat(refused.statusCode()).isEqualTo(429);
		JsonNode violation = SimHttp.json(refused).at("/error/details/1/violations/0");
		assertThat(violation.get("quotaId").stringValue())
			.isEqualTo("GenerateContentOutputTokensPerModelPerMinute-FreeTier");
		assertThat(violation.get("quotaMetric").stringValue())
			.isEqualTo("generativelanguage.googleapis.com/generate_content_free_tier_output_token_count");
		assertThat(violation.get("quotaValue").stringValue()).isEqualTo("100");
	}

	@Test
	void geminiNamesConcurrencyInItsRefusal() {
		start(ProviderSimulator.builder()
			.model("gemini-2.5-flash", (limits) -> limits.concurrentRequests(1))
			.latency((latency) -> latency.timeToFirstToken(Duration.ofSeconds(1)).fixedOutputTokens(5)));
		HttpResponse<InputStream> streaming = SimHttp
			.open(this.simulator, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", SimHttp.gemini(100))
			.join();
		assertThat(streaming.statusCode()).isEqualTo(200);
		HttpResponse<String> refused = SimHttp.post(this.simulator, GEMINI, SimHttp.gemini(100));
		assertThat(refused.statusCode()).isEqualTo(429);
		JsonNode violation = SimHttp.json(refused).at("/error/details/1/violations/0");
		assertThat(violation.get("quotaId").stringValue())
			.isEqualTo("GenerateContentConcurrentRequestsPerProjectPerModel-FreeTier");
		assertThat(violation.get("quotaMetric").stringValue())
			.isEqualTo("generativelanguage.googleapis.com/generate_content_free_tier_concurrent_requests");
		this.clock.advance(Duration.ofSeconds(1));
		SimHttp.readAll(streaming);
	}

	@Test
	void geminiKeepsTheRecordedQuotaIdsForRequestsAndInputTokens() {
		start(ProviderSimulator.builder()
			.model("gemini-2.5-flash", (limits) -> limits.requestsPerMinute(1))
			.model("gemini-2.5-pro", (limits) -> limits.inputTokensPerMinute(10)));
		SimHttp.post(this.simulator, GEMINI, SimHttp.gemini(10));
		assertThat(SimHttp.json(SimHttp.post(this.simulator, GEMINI, SimHttp.gemini(10)))
			.at("/error/details/1/violations/0/quotaId")
			.stringValue()).isEqualTo("GenerateRequestsPerMinutePerProjectPerModel-FreeTier");
		String pro = "/v1beta/models/gemini-2.5-pro:generateContent";
		SimHttp.post(this.simulator, pro, SimHttp.gemini(10));
		assertThat(SimHttp.json(SimHttp.post(this.simulator, pro, SimHttp.gemini(10)))
			.at("/error/details/1/violations/0/quotaId")
			.stringValue()).isEqualTo("GenerateContentInputTokensPerModelPerMinute-FreeTier");
	}

}
