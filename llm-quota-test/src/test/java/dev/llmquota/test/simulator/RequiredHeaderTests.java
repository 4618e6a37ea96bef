package dev.llmquota.test.simulator;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A simulator that checks a key, as providers do: a call without the header, or with
 * another value, is answered 401 and served nothing.
 */
class RequiredHeaderTests {

	@Test
	void aCallWithoutTheRequiredHeaderIsAnswered401AndServedNothing() throws Exception {
		try (ProviderSimulator simulator = ProviderSimulator.builder().requireHeader("api-key", "k-east").start()) {
			assertThat(post(simulator, null).statusCode()).isEqualTo(401);
			assertThat(post(simulator, "k-west").statusCode()).isEqualTo(401);
			assertThat(simulator.requestLog().size()).as("served").isZero();
			assertThat(post(simulator, "k-east").statusCode()).isEqualTo(200);
			assertThat(simulator.requestLog().size()).isEqualTo(1);
		}
	}

	private static HttpResponse<String> post(ProviderSimulator simulator, String key) throws Exception {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(simulator.baseUrl() + "/v1/chat/completions"))
			.timeout(Duration.ofSeconds(10))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(SimHttp.openAi("gpt-4o", 10, false)));
		if (key != null) {
			request.header("api-key", key);
		}
		return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

}
