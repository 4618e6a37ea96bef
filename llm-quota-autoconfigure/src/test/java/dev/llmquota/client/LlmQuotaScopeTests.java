package dev.llmquota.client;

import java.time.Duration;

import dev.llmquota.LlmQuota;
import dev.llmquota.core.Pool;
import org.junit.jupiter.api.Test;

import org.springframework.http.MediaType;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Attributes for a block of code, where no attribute can be set on a request.
 */
class LlmQuotaScopeTests {

	private static final Duration PATIENCE = Duration.ofSeconds(10);

	@Test
	void aReactorContextNamesTheModelOfAWebClientCall() {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OPENAI, (sim) -> {
		})) {
			provider.send(10, "Hi.").contextWrite(LlmQuota.with(LlmQuota.MODEL, "reports").context()).block(PATIENCE);
			assertThat(provider.app.engine().pools()).extracting(Pool::model).contains("reports");
		}
	}

	@Test
	void aScopeOnTheThreadSteersBlockingCallsOfBothClients() {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OPENAI, (sim) -> {
		})) {
			LlmQuota.with(LlmQuota.MODEL, "nightly").and(LlmQuota.SKIP, false).run(() -> {
				provider.send(10, "Hi.").block(PATIENCE);
				provider.app.restClient()
					.post()
					.uri(provider.simulator.baseUrl() + "/v1/chat/completions")
					.contentType(MediaType.APPLICATION_JSON)
					.body(provider.dialect.body(SimulatedProvider.MODEL, 10, false, "Hi."))
					.retrieve()
					.body(String.class);
			});
			Pool nightly = provider.app.engine().pool(SimulatedProvider.PROVIDER, "nightly");
			assertThat(nightly.drift().samples()).isEqualTo(2);
			assertThat(LlmQuota.current(LlmQuota.MODEL)).as("the scope ends with the block").isNull();
		}
	}

	@Test
	void aSkipScopeLeavesCallsUngoverned() {
		try (SimulatedProvider provider = SimulatedProvider.start(DialectCase.OPENAI, (sim) -> {
		})) {
			String answer = LlmQuota.with(LlmQuota.SKIP, true).get(() -> provider.send(10, "Hi.").block(PATIENCE));
			assertThat(answer).isNotEmpty();
			assertThat(provider.pool().drift().samples()).isZero();
		}
	}

}
