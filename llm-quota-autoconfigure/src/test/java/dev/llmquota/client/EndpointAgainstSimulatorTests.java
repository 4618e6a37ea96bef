package dev.llmquota.client;

import dev.llmquota.actuate.LlmQuotaEndpoint;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.QuotaState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code /actuator/llmquota} after real calls to the simulated provider of every dialect.
 */
class EndpointAgainstSimulatorTests {

	@ParameterizedTest
	@EnumSource(DialectCase.class)
	void showsEveryBucketOfAPoolAfterCalls(DialectCase dialect) {
		try (SimulatedProvider provider = SimulatedProvider.startWeb(dialect,
				(sim) -> sim.model(SimulatedProvider.MODEL,
						(limits) -> limits.requestsPerMinute(600).tokensPerMinute(600_000)),
				"models.test-model.requests-per-minute=600", "models.test-model.tokens-per-minute=600000",
				"models.test-model.concurrent-requests=8", "management.endpoints.web.exposure.include=llmquota")) {
			provider.send(100, "Summarise the quarter in one line.").block();
			await().until(() -> provider.inFlight() == 0);
			String body = WebClient.create(provider.app.serverUrl())
				.get()
				.uri("/actuator/llmquota/" + SimulatedProvider.PROVIDER)
				.retrieve()
				.bodyToMono(String.class)
				.block();
			JsonNode pool = JsonMapper.shared().readTree(body).path("pools").get(0);
			assertThat(pool.path("model").asString()).isEqualTo(SimulatedProvider.MODEL);
			assertThat(pool.path("state").asString()).isEqualTo("OK");
			assertThat(pool.path("binding").asString()).isIn("requests-per-minute", "tokens-per-minute",
					"concurrent-requests");
			JsonNode tokens = pool.path("dimensions").path("tokens-per-minute");
			assertThat(tokens.path("limit").asLong()).isEqualTo(600_000);
			assertThat(tokens.path("enforced").asLong()).isEqualTo(480_000);
			// the provider's figure holds until the reset it named (often within
			// milliseconds of a small call), the local books after it
			assertThat(tokens.path("source").asString()).isIn(dialect.reportsHeaders() ? "server" : "local", "local");
			assertThat(tokens.has("reset")).as("reset is shown, null or not").isTrue();
			assertThat(pool.has("lastRateLimit")).isTrue();
			assertThat(pool.path("dimensions").path("concurrent-requests").path("inUse").asLong()).isZero();
			assertThat(pool.path("inFlight").path("requests").asLong()).isZero();
			assertThat(pool.path("estimateDrift").path("samples").asLong()).isEqualTo(1);
			assertThat(pool.path("output").path("billed").asLong()).isPositive();
			assertThat(pool.toString()).doesNotContain("Summarise");
		}
	}

	@Test
	void theWriteOperationChangesALimitAndResetsAnExhaustedPool() {
		try (SimulatedProvider provider = SimulatedProvider.startWeb(DialectCase.OPENAI, (sim) -> {
		}, "models.test-model.tokens-per-minute=30000", "budget.per-day=50.00",
				"models.test-model.cost.input-per-million=2.50", "models.test-model.cost.output-per-million=10.00",
				"management.endpoints.web.exposure.include=llmquota",
				"management.endpoint.llmquota.access=unrestricted")) {
			LlmQuotaEndpoint endpoint = provider.app.context().getBean(LlmQuotaEndpoint.class);
			assertThat(post(provider, "{\"model\":\"" + SimulatedProvider.MODEL
					+ "\",\"dimension\":\"tokens-per-minute\",\"limit\":90000}"))
				.isEqualTo(200);
			assertThat(provider.pool().limits().asMap()).containsEntry(Dimension.TOKENS_PER_MINUTE, 90_000L);
			// a budget in the currency the report shows it in
			assertThat(post(provider, "{\"dimension\":\"budget-per-day\",\"limit\":62.5}")).isEqualTo(200);
			assertThat(provider.pool().account().limits().asMap()).containsEntry(Dimension.BUDGET_PER_DAY, 62_500_000L);
			// what cannot be set is refused, naming why, and changes nothing
			assertThat(post(provider, "{\"dimension\":\"tokens-per-minute\",\"limit\":12.5}")).isEqualTo(400);
			assertThat(post(provider, "{\"dimension\":\"tokens-per-minute\",\"limit\":1e30}")).isEqualTo(400);
			assertThat(post(provider, "{\"dimension\":\"tokens-per-minute\",\"limit\":-5}")).isEqualTo(400);
			assertThat(post(provider, "{\"dimension\":\"tokens-per-mintue\",\"limit\":12}")).isEqualTo(400);
			assertThat(post(provider,
					"{\"model\":\"" + SimulatedProvider.MODEL + "\",\"dimension\":\"budget-per-day\",\"limit\":10}"))
				.isEqualTo(400);
			assertThat(provider.pool().limits().asMap()).containsEntry(Dimension.TOKENS_PER_MINUTE, 90_000L)
				.doesNotContainKey(Dimension.BUDGET_PER_DAY);
			provider.app.engine().exhaust(provider.pool(), true, null, "insufficient_quota", null);
			assertThat(provider.app.engine().state(provider.pool())).isEqualTo(QuotaState.EXHAUSTED);
			endpoint.update(SimulatedProvider.PROVIDER, null, true, null, null);
			assertThat(provider.app.engine().state(provider.pool())).isEqualTo(QuotaState.OK);
			assertThat(endpoint.provider("nobody")).isNull();
		}
	}

	private static int post(SimulatedProvider provider, String json) {
		return WebClient.create(provider.app.serverUrl())
			.post()
			.uri("/actuator/llmquota/" + SimulatedProvider.PROVIDER)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(json)
			.exchangeToMono((response) -> response.releaseBody().thenReturn(response.statusCode().value()))
			.block();
	}

}
