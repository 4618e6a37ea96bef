package dev.llmquota.client;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

import com.sun.net.httpserver.HttpServer;
import dev.llmquota.QuotaWaitTimeoutException;
import dev.llmquota.client.okhttp.LlmQuotaOkHttpInterceptor;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Credentials per provider entry ({@code llm.quota.providers.<id>.headers}): every
 * governed call carries them, replacing the client's own, and their values appear nowhere
 * else: not in logs, not on the endpoint, not in exception messages.
 */
@ExtendWith(OutputCaptureExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CredentialsTests {

	private static final String MARKER = "MARKER-7f3a9c-secret";

	private final ConcurrentLinkedQueue<String> received = new ConcurrentLinkedQueue<>();

	private HttpServer provider;

	private GovernedApp app;

	@BeforeAll
	void start() throws IOException {
		// a provider that answers every call at once and notes the key it was given
		this.provider = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		this.provider.createContext("/", (exchange) -> {
			exchange.getRequestBody().readAllBytes();
			this.received.add(String.valueOf(exchange.getRequestHeaders().getFirst("api-key")));
			byte[] answer = ("{\"id\":\"x\",\"object\":\"chat.completion\",\"model\":\"test-model\","
					+ "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"ok\"},"
					+ "\"finish_reason\":\"stop\"}],"
					+ "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1,\"total_tokens\":6}}")
				.getBytes(StandardCharsets.UTF_8);
			exchange.getResponseHeaders().set("Content-Type", "application/json");
			exchange.sendResponseHeaders(200, answer.length);
			exchange.getResponseBody().write(answer);
			exchange.close();
		});
		this.provider.start();
		String entry = "llm.quota.providers.east.";
		this.app = GovernedApp.startWeb(entry + "base-url=" + baseUrl(), entry + "dialect=openai",
				entry + "headers.api-key=" + MARKER, entry + "models.test-model.requests-per-minute=6000",
				entry + "models.slow-model.requests-per-minute=1", "llm.quota.headroom=1.0",
				"management.endpoints.web.exposure.include=llmquota", "logging.level.dev.llmquota=DEBUG");
	}

	@AfterAll
	void stop() {
		if (this.app != null) {
			this.app.close();
		}
		this.provider.stop(0);
	}

	@Test
	void everyAdapterSendsTheEntrysHeadersInPlaceOfTheClientsOwn(CapturedOutput output) throws IOException {
		this.app.webClient()
			.post()
			.uri(baseUrl() + "/v1/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.header("api-key", "the-clients-own")
			.bodyValue(body("test-model"))
			.retrieve()
			.bodyToMono(String.class)
			.block(Duration.ofSeconds(30));
		this.app.restClient()
			.post()
			.uri(baseUrl() + "/v1/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.header("api-key", "the-clients-own")
			.body(body("test-model"))
			.retrieve()
			.body(String.class);
		OkHttpClient okHttp = new OkHttpClient.Builder()
			.addInterceptor(this.app.context().getBean(LlmQuotaOkHttpInterceptor.class))
			.build();
		try (Response response = okHttp
			.newCall(new Request.Builder().url(baseUrl() + "/v1/chat/completions")
				.header("api-key", "the-clients-own")
				.post(RequestBody.create(body("test-model"), okhttp3.MediaType.get("application/json")))
				.build())
			.execute()) {
			assertThat(response.code()).isEqualTo(200);
		}
		assertThat(this.received).as("the key each call reached the provider with")
			.hasSizeGreaterThanOrEqualTo(3)
			.containsOnly(MARKER);
		assertThat(output.getAll()).as("logs").doesNotContain(MARKER);
	}

	@Test
	void theValuesAreInNoLogEndpointOrExceptionMessage(CapturedOutput output) {
		// start-up logs what it governs, once more inside this test's capture
		String entry = "llm.quota.providers.east.";
		GovernedApp
			.start(entry + "base-url=" + baseUrl(), entry + "dialect=openai", entry + "headers.api-key=" + MARKER,
					"logging.level.dev.llmquota=DEBUG")
			.close();
		WebClient client = this.app.webClient();
		client.post()
			.uri(baseUrl() + "/v1/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body("slow-model"))
			.retrieve()
			.bodyToMono(String.class)
			.block(Duration.ofSeconds(30));
		// one a minute: the next call cannot wait that long
		Throwable refused = org.assertj.core.api.Assertions.catchThrowable(() -> client.post()
			.uri(baseUrl() + "/v1/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.attribute(dev.llmquota.LlmQuota.MAX_WAIT, Duration.ofMillis(50))
			.bodyValue(body("slow-model"))
			.retrieve()
			.bodyToMono(String.class)
			.block(Duration.ofSeconds(30)));
		assertThat(refused).isInstanceOf(QuotaWaitTimeoutException.class);
		for (Throwable cause = refused; cause != null; cause = cause.getCause()) {
			assertThat(String.valueOf(cause.getMessage())).doesNotContain(MARKER);
		}
		String endpoint = WebClient.create(this.app.serverUrl())
			.get()
			.uri("/actuator/llmquota")
			.retrieve()
			.bodyToMono(String.class)
			.block(Duration.ofSeconds(30));
		String east = WebClient.create(this.app.serverUrl())
			.get()
			.uri("/actuator/llmquota/east")
			.retrieve()
			.bodyToMono(String.class)
			.block(Duration.ofSeconds(30));
		assertThat(endpoint + east).as("the endpoint").contains("east").doesNotContain(MARKER);
		assertThat(output.getAll()).as("logs").contains("provider 'east'").doesNotContain(MARKER);
		ProviderEntry governing = this.app.context()
			.getBean(LlmQuotaCalls.class)
			.entryOf(dev.llmquota.provider.DialectId.OPENAI, java.net.URI.create("/v1/chat/completions"),
					(name) -> null);
		assertThat(governing.toString()).contains("api-key").doesNotContain(MARKER);
	}

	@Test
	void aHeaderThatCannotBeSentStopsStartUpNamingThePropertyButNotTheValue() {
		String entry = "llm.quota.providers.east.";
		for (List<String> mistake : List.of(List.of("headers.api-key", MARKER + "\r\nX-Injected: 1"),
				List.of("headers.content-length", MARKER), List.of("headers.api-key", " "))) {
			assertThatThrownBy(() -> GovernedApp.start(entry + "base-url=" + baseUrl(), entry + "dialect=openai",
					entry + mistake.get(0) + "=" + mistake.get(1)))
				.satisfies((failure) -> {
					StringBuilder messages = new StringBuilder();
					for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
						messages.append(cause.getMessage()).append('\n');
					}
					assertThat(messages.toString()).contains("llm.quota.providers.east." + mistake.get(0))
						.doesNotContain(MARKER);
				});
		}
	}

	private String baseUrl() {
		return "http://127.0.0.1:" + this.provider.getAddress().getPort();
	}

	private static String body(String model) {
		return JsonMapper.shared()
			.writeValueAsString(java.util.Map.of("model", model, "max_tokens", 10, "messages",
					List.of(java.util.Map.of("role", "user", "content", "Say ok."))));
	}

}
