package dev.llmquota.client;

import java.time.Duration;
import java.util.Map;

import dev.llmquota.RateLimitedException;
import dev.llmquota.client.okhttp.LlmQuotaOkHttpInterceptor;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * A Responses stream that refuses its call after a 200, before any of it reached the
 * caller, is retried like a 429 by the blocking adapters too; when the attempts are used
 * up, a caller with a retry loop of its own (an SDK on OkHttp) gets the provider's stream
 * marked not to be retried.
 */
class InStreamRefusalTests {

	private static final Duration PATIENCE = Duration.ofSeconds(15);

	private static final String REFUSED = "event: response.created\n"
			+ "data: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"status\":\"in_progress\"}}\n\n"
			+ "event: response.failed\n"
			+ "data: {\"type\":\"response.failed\",\"response\":{\"id\":\"resp_1\",\"status\":\"failed\",\"error\":"
			+ "{\"code\":\"rate_limit_exceeded\",\"message\":\"Rate limit reached for gpt-5.1 in organization org-AAA on"
			+ " requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 100ms.\"}}}\n\n";

	private static final String BODY = "{\"model\":\"gpt-5.1\",\"stream\":true,\"input\":\"Hello\"}";

	@Test
	void restClientRetriesItThenFailsWithTheContractException() {
		try (LoopbackServer server = new LoopbackServer(200, Map.of("content-type", "text/event-stream"), REFUSED);
				GovernedApp app = GovernedApp.start("llm.quota.providers.p.base-url=" + server.baseUrl(),
						"llm.quota.providers.p.dialect=openai", "llm.quota.retry.max-attempts=3")) {
			assertThatException()
				.isThrownBy(() -> app.restClient()
					.post()
					.uri(server.baseUrl() + "/v1/responses")
					.contentType(org.springframework.http.MediaType.APPLICATION_JSON)
					.body(BODY)
					.retrieve()
					.body(String.class))
				.isInstanceOf(RateLimitedException.class);
			assertThat(server.requests()).hasSize(3);
			assertThat(app.engine().inFlight(app.engine().accounts().iterator().next())).isZero();
		}
	}

	@Test
	void anSdkOnOkHttpGetsTheProvidersStreamMarkedNotToBeRetried() throws Exception {
		try (LoopbackServer server = new LoopbackServer(200, Map.of("content-type", "text/event-stream"), REFUSED);
				GovernedApp app = GovernedApp.start("llm.quota.providers.p.base-url=" + server.baseUrl(),
						"llm.quota.providers.p.dialect=openai", "llm.quota.retry.max-attempts=3")) {
			OkHttpClient client = new OkHttpClient.Builder().callTimeout(PATIENCE)
				.addInterceptor(app.context().getBean(LlmQuotaOkHttpInterceptor.class))
				.build();
			Request request = new Request.Builder().url(server.baseUrl() + "/v1/responses")
				.post(RequestBody.create(BODY, MediaType.get("application/json")))
				.build();
			try (Response response = client.newCall(request).execute()) {
				assertThat(response.code()).isEqualTo(200);
				assertThat(response.header("x-should-retry")).isEqualTo("false");
				assertThat(response.header(LlmQuotaOkHttpInterceptor.EXCEPTION_HEADER))
					.isEqualTo("RateLimitedException");
				assertThat(response.body().string()).isEqualTo(REFUSED);
			}
			assertThat(server.requests()).hasSize(3);
		}
	}

}
