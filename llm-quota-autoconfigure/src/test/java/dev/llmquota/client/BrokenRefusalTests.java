package dev.llmquota.client;

import java.io.IOException;
import java.time.Duration;

import dev.llmquota.RateLimitedException;
import dev.llmquota.client.okhttp.LlmQuotaOkHttpInterceptor;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.Pool;
import dev.llmquota.core.QuotaState;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.http.MediaType;
import org.springframework.web.client.HttpServerErrorException;
import org.springframework.web.reactive.function.client.WebClientResponseException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * A 429 whose body the connection drops halfway: its status says the provider generated
 * nothing, and its headers name the wait. The call ends as a refusal read whole does: its
 * tokens back, the pool held for the wait, and the caller told by the contract exception.
 */
class BrokenRefusalTests {

	private static final String BODY = "{\"model\":\"gpt-4o\",\"max_tokens\":800,"
			+ "\"messages\":[{\"role\":\"user\",\"content\":\"Say ok.\"}]}";

	@ParameterizedTest
	@ValueSource(strings = { "RestClient", "WebClient", "OkHttp" })
	void aRefusalWhoseBodyDropsGivesItsTokensBackAndHoldsThePool(String client) {
		try (FaultyServer server = new FaultyServer();
				GovernedApp app = GovernedApp.start("llm.quota.providers.openai.base-url=" + server.baseUrl(),
						"llm.quota.providers.openai.dialect=openai", "llm.quota.providers.openai.burst-window=60s",
						"llm.quota.providers.openai.models.gpt-4o.tokens-per-minute=1000",
						"llm.quota.providers.openai.models.gpt-4o.requests-per-minute=600", "llm.quota.headroom=1.0",
						"llm.quota.max-wait=2s")) {
			server.failAt(FaultyServer.Stage.REFUSAL_BODY);
			Pool pool = app.engine().pool("openai", "gpt-4o");
			String url = server.baseUrl() + "/v1/chat/completions";
			assertThatException().isThrownBy(() -> call(app, client, url))
				.as("its wait is past the call's max-wait")
				.isInstanceOf(RateLimitedException.class);
			assertThat(app.engine().accounts().stream().mapToInt(app.engine()::inFlight).sum()).isZero();
			assertThat(
					app.engine().snapshot(pool).bucket(BucketSpec.Scope.POOL, Dimension.TOKENS_PER_MINUTE).remaining())
				.as("tokens given back: a 429 generated nothing")
				.isEqualTo(1000);
			assertThat(app.engine().state(pool)).as("the 429's wait in the books").isEqualTo(QuotaState.THROTTLED);
		}
	}

	/**
	 * An overload whose body drops on every attempt: after llm-quota's attempts its
	 * status and headers reach the caller, marked not to be retried, as an overload read
	 * whole does; never an I/O error a client's own retry (Spring AI's, an SDK's) would
	 * retry.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "RestClient", "WebClient", "OkHttp" })
	void anOverloadWhoseBodyDropsReachesTheCallerMarkedAfterLlmQuotasAttempts(String client) {
		try (FaultyServer server = new FaultyServer();
				GovernedApp app = GovernedApp.start("llm.quota.providers.openai.base-url=" + server.baseUrl(),
						"llm.quota.providers.openai.dialect=openai",
						"llm.quota.providers.openai.models.gpt-4o.requests-per-minute=600",
						"llm.quota.retry.max-attempts=2", "llm.quota.retry.initial-backoff=10ms",
						"llm.quota.retry.max-backoff=20ms")) {
			server.failAt(FaultyServer.Stage.OVERLOAD_BODY);
			String url = server.baseUrl() + "/v1/chat/completions";
			switch (client) {
				case "RestClient" -> assertThatException().isThrownBy(() -> call(app, client, url))
					.isInstanceOfSatisfying(HttpServerErrorException.ServiceUnavailable.class,
							(ex) -> assertThat(ex.getResponseHeaders().getFirst("x-should-retry")).isEqualTo("false"));
				case "WebClient" -> assertThatException().isThrownBy(() -> call(app, client, url))
					.isInstanceOfSatisfying(WebClientResponseException.ServiceUnavailable.class,
							(ex) -> assertThat(ex.getHeaders().getFirst("x-should-retry")).isEqualTo("false"));
				default -> {
					try (Response answer = okHttp(app).newCall(okHttpRequest(url)).execute()) {
						assertThat(answer.code()).isEqualTo(503);
						assertThat(answer.header("x-should-retry")).isEqualTo("false");
					}
					catch (IOException ex) {
						throw new AssertionError("an I/O error the SDK would retry", ex);
					}
				}
			}
			assertThat(app.engine().accounts().stream().mapToInt(app.engine()::inFlight).sum()).isZero();
		}
	}

	private static OkHttpClient okHttp(GovernedApp app) {
		return new OkHttpClient.Builder().addInterceptor(app.context().getBean(LlmQuotaOkHttpInterceptor.class))
			.build();
	}

	private static Request okHttpRequest(String url) {
		return new Request.Builder().url(url)
			.post(RequestBody.create(BODY, okhttp3.MediaType.get("application/json")))
			.build();
	}

	private static void call(GovernedApp app, String client, String url) throws Exception {
		switch (client) {
			case "RestClient" -> app.restClient()
				.post()
				.uri(url)
				.contentType(MediaType.APPLICATION_JSON)
				.body(BODY)
				.retrieve()
				.body(String.class);
			case "WebClient" -> app.webClient()
				.post()
				.uri(url)
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue(BODY)
				.retrieve()
				.bodyToMono(String.class)
				.block(Duration.ofSeconds(30));
			default -> okHttp(app).newCall(okHttpRequest(url)).execute().close();
		}
	}

}
