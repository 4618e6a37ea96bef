package dev.llmquota.test.simulator;

import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.llmquota.test.junit.ProviderSimulatorExtension;
import dev.llmquota.test.simulator.RequestRecord.Outcome;
import dev.llmquota.test.simulator.clock.ManualSimClock;
import dev.llmquota.test.simulator.dialect.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Streams, bad input, faults and exhaustion per dialect, through the JUnit extension.
 */
class DialectBehaviourTests {

	static final ManualSimClock clock = new ManualSimClock();

	@RegisterExtension
	static final ProviderSimulatorExtension extension = new ProviderSimulatorExtension(ProviderSimulator.builder()
		.clock(clock)
		.latency((latency) -> latency.fixedOutputTokens(20))
		.model("llama3.2", (limits) -> limits.requestsPerMinute(100)));

	@Test
	void streamsOllamaAsNdjsonWithUsageInEvalCounts(ProviderSimulator simulator) {
		HttpResponse<String> response = SimHttp.post(simulator, "/api/chat", SimHttp.ollama("llama3.2", 50, true));
		assertThat(response.headers().firstValue("content-type")).hasValue("application/x-ndjson");
		List<JsonNode> lines = response.body().lines().map(Json.MAPPER::readTree).toList();
		assertThat(lines).hasSizeGreaterThan(2);
		assertThat(lines.subList(0, lines.size() - 1)).allSatisfy((line) -> {
			assertThat(line.get("done").asBoolean()).isFalse();
			assertThat(line.at("/message/role").stringValue()).isEqualTo("assistant");
		});
		JsonNode last = lines.get(lines.size() - 1);
		assertThat(last.get("done").asBoolean()).isTrue();
		assertThat(last.get("done_reason").stringValue()).isEqualTo("stop");
		assertThat(last.get("eval_count").asLong()).isEqualTo(20);
		assertThat(last.get("prompt_eval_count").asLong()).isPositive();
	}

	@Test
	void answersOllamaWithOneObjectWhenNotStreaming(ProviderSimulator simulator) {
		JsonNode body = SimHttp.json(SimHttp.post(simulator, "/api/chat", SimHttp.ollama("llama3.2", 50, false)));
		assertThat(body.get("done").asBoolean()).isTrue();
		assertThat(body.get("eval_count").asLong()).isEqualTo(20);
	}

	@Test
	void streamsGeminiAsSseWithUsageOnTheLastChunk(ProviderSimulator simulator) {
		HttpResponse<String> response = SimHttp.post(simulator,
				"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", SimHttp.gemini(100));
		List<JsonNode> chunks = response.body()
			.lines()
			.filter((line) -> line.startsWith("data: "))
			.map((line) -> Json.MAPPER.readTree(line.substring(6)))
			.toList();
		assertThat(chunks.subList(0, chunks.size() - 1))
			.allSatisfy((chunk) -> assertThat(chunk.has("usageMetadata")).isFalse());
		JsonNode last = chunks.get(chunks.size() - 1);
		assertThat(last.at("/candidates/0/finishReason").stringValue()).isEqualTo("STOP");
		assertThat(last.at("/usageMetadata/candidatesTokenCount").asLong()).isEqualTo(20);
		assertThat(response.body()).doesNotContain("[DONE]");
	}

	@Test
	void answersBedrockConverseWithUsageAndNoRateLimitHeaders(ProviderSimulator simulator) {
		HttpResponse<String> response = SimHttp.post(simulator, "/model/amazon.nova-lite-v1%3A0/converse",
				SimHttp.bedrock(100));
		JsonNode body = SimHttp.json(response);
		assertThat(body.at("/usage/outputTokens").asLong()).isEqualTo(20);
		assertThat(body.at("/output/message/content/0/text").stringValue()).isNotBlank();
		assertThat(response.headers().map().keySet()).noneMatch((name) -> name.contains("ratelimit"));
		await().atMost(Duration.ofSeconds(5)).until(() -> simulator.requestLog().size() == 1);
		assertThat(simulator.requestLog().records().get(0).model()).isEqualTo("amazon.nova-lite-v1:0");
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|',
			textBlock = """
					/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Aapplication-inference-profile%2Fa1b2c3d4/converse | arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4
					/model/arn:aws:bedrock:us-east-1::foundation-model%2Famazon.nova-lite-v1:0/converse                    | arn:aws:bedrock:us-east-1::foundation-model/amazon.nova-lite-v1:0
					/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse                                         | us.anthropic.claude-sonnet-4-5-20250929-v1:0
					/model/a+b%25c/converse                                                                                | a+b%c
					/openai/deployments/100%25-gpt/chat/completions?api-version=2024-10-21                                 | 100%-gpt
					""")
	void decodesModelIdsInThePathExactlyOnce(String path, String model, ProviderSimulator simulator) {
		String body = path.contains("converse") ? SimHttp.bedrock(100) : SimHttp.openAi("ignored", 100, false);
		assertThat(SimHttp.post(simulator, path, body).statusCode()).isEqualTo(200);
		await().atMost(Duration.ofSeconds(5)).until(() -> simulator.requestLog().size() == 1);
		assertThat(simulator.requestLog().records().get(0).model()).isEqualTo(model);
	}

	@ParameterizedTest
	@CsvSource({ "-1", "-2", "0" })
	void treatsOllamasNonPositiveNumPredictAsNoCeiling(int numPredict, ProviderSimulator simulator) {
		HttpResponse<String> response = SimHttp.post(simulator, "/api/chat",
				SimHttp.ollama("llama3.2", numPredict, false));
		assertThat(response.statusCode()).isEqualTo(200);
		await().atMost(Duration.ofSeconds(5)).until(() -> simulator.requestLog().size() == 1);
		assertThat(simulator.requestLog().records().get(0).maxTokens()).isEqualTo(4096);
	}

	@Test
	void answersUnservedPathsWithAJson404(ProviderSimulator simulator) {
		HttpResponse<String> response = SimHttp.post(simulator, "/v2/%22quoted%22%5Cslash", "{}");
		assertThat(response.statusCode()).isEqualTo(404);
		assertThat(response.headers().firstValue("content-type")).hasValue("application/json");
		assertThat(SimHttp.json(response).at("/error/message").stringValue())
			.isEqualTo("No simulated provider serves POST /v2/\"quoted\"\\slash");
	}

	@Test
	void namesEveryAnthropicStreamEventAfterItsDataType(ProviderSimulator simulator) {
		HttpResponse<String> response = SimHttp.post(simulator, "/v1/messages",
				SimHttp.anthropic("claude-sonnet-4-5", 100, true));
		List<String> events = List.of(response.body().split("\n\n"));
		assertThat(events).hasSizeGreaterThan(6);
		assertThat(events).allSatisfy((event) -> {
			List<String> lines = event.lines().toList();
			assertThat(lines).hasSize(2);
			assertThat(lines.get(0)).startsWith("event: ");
			assertThat(lines.get(1)).startsWith("data: ");
			JsonNode data = Json.MAPPER.readTree(lines.get(1).substring(6));
			assertThat(data.get("type").stringValue()).isEqualTo(lines.get(0).substring(7));
		});
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', textBlock = """
			/v1/chat/completions                                      | /error/type    | invalid_request_error
			/openai/deployments/gpt-4o/chat/completions               | /error/type    | invalid_request_error
			/v1/messages                                              | /error/type    | invalid_request_error
			/model/amazon.nova-lite-v1:0/converse                     | /message       | *
			/v1beta/models/gemini-2.5-flash:generateContent           | /error/status  | INVALID_ARGUMENT
			/api/chat                                                 | /error         | *
			/v1/responses                                             | /error/type    | invalid_request_error
			/v1/embeddings                                            | /error/type    | invalid_request_error
			/openai/deployments/embed-small/embeddings                | /error/type    | invalid_request_error
			/model/amazon.nova-lite-v1:0/converse-stream              | /message       | *
			/model/anthropic.claude-3-5-haiku-20241022-v1:0/invoke    | /message       | *
			/model/amazon.titan-embed-text-v2:0/invoke                | /message       | *
			/v1beta/models/text-embedding-004:embedContent            | /error/status  | INVALID_ARGUMENT
			/v1beta/models/text-embedding-004:batchEmbedContents      | /error/status  | INVALID_ARGUMENT
			/api/embed                                                | /error         | *
			""")
	void answersUnparseableBodiesWithTheDialectsOwn400(String path, String pointer, String expected,
			ProviderSimulator simulator) {
		HttpResponse<String> response = SimHttp.post(simulator, path, "{not json");
		assertThat(response.statusCode()).isEqualTo(400);
		JsonNode value = SimHttp.json(response).at(pointer);
		assertThat(value.isString()).isTrue();
		if (!"*".equals(expected)) {
			assertThat(value.stringValue()).isEqualTo(expected);
		}
		if (path.startsWith("/model/")) {
			assertThat(response.headers().firstValue("x-amzn-ErrorType"))
				.hasValueSatisfying((type) -> assertThat(type).startsWith("ValidationException:"));
		}
		assertThat(SimHttp.post(simulator, path, "[1,2]").statusCode()).isEqualTo(400);
		assertThat(SimHttp.post(simulator, path, "{}").statusCode()).isEqualTo(400);
		await().atMost(Duration.ofSeconds(5)).until(() -> simulator.requestLog().size() == 3);
		assertThat(simulator.requestLog().records())
			.allSatisfy((record) -> assertThat(record.outcome()).isEqualTo(Outcome.BAD_REQUEST));
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|',
			textBlock = """
					/v1/chat/completions                             | 429 | /error/code                      | insufficient_quota
					/v1/messages                                     | 429 | /error/details/error_code        | enforced_spend_limit_reached
					/model/amazon.nova-lite-v1:0/converse            | 400 | /message                         | *
					/v1beta/models/gemini-2.5-flash:generateContent  | 429 | /error/details/1/violations/0/quotaId | GenerateRequestsPerDayPerProjectPerModel-FreeTier
					/openai/deployments/gpt-4o/chat/completions      | 429 | /error/code                      | 429
					""")
	void answersAdministrativeExhaustionInEachDialect(String path, int status, String pointer, String expected,
			ProviderSimulator simulator) {
		simulator.exhausted(true);
		String body = path.contains("messages") ? SimHttp.anthropic("claude-sonnet-4-5", 100, false)
				: path.contains("converse") ? SimHttp.bedrock(100)
						: path.contains("gemini") ? SimHttp.gemini(100) : SimHttp.openAi("gpt-4o", 100, false);
		HttpResponse<String> response = SimHttp.post(simulator, path, body);
		assertThat(response.statusCode()).isEqualTo(status);
		if (!"*".equals(expected)) {
			assertThat(SimHttp.json(response).at(pointer).stringValue()).isEqualTo(expected);
		}
		if (path.contains("messages")) {
			assertThat(response.headers().firstValue("retry-after")).isEmpty();
		}
		if (path.contains("deployments")) {
			assertThat(response.headers().firstValue("retry-after")).hasValue("86400");
		}
		await().atMost(Duration.ofSeconds(5)).until(() -> simulator.requestLog().refused().size() == 1);
	}

	@Test
	void dropsTheConnectionMidStream(ProviderSimulator simulator) throws Exception {
		simulator.faults().next(Fault.DROP_MID_STREAM);
		HttpResponse<InputStream> response = SimHttp
			.open(simulator, "/v1/chat/completions", SimHttp.openAi("gpt-4o", 100, true))
			.join();
		assertThat(response.statusCode()).isEqualTo(200);
		assertThatExceptionOfType(IOException.class).isThrownBy(() -> {
			try (InputStream body = response.body()) {
				body.readAllBytes();
			}
		});
		await().atMost(Duration.ofSeconds(5)).until(() -> simulator.requestLog().size() == 1);
		RequestRecord record = simulator.requestLog().records().get(0);
		assertThat(record.outcome()).isEqualTo(Outcome.DROPPED);
		assertThat(record.outputTokens()).isLessThan(20);
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', textBlock = """
			/v1/chat/completions | SERVER_ERROR | 500
			/v1/chat/completions | OVERLOADED   | 503
			/v1/messages         | OVERLOADED   | 529
			/api/chat            | SERVER_ERROR | 500
			""")
	void injectsServerErrors(String path, Fault fault, int status, ProviderSimulator simulator) {
		simulator.faults().next(fault);
		String body = path.contains("messages") ? SimHttp.anthropic("claude-sonnet-4-5", 100, false)
				: path.contains("api") ? SimHttp.ollama("llama3.2", 10, false) : SimHttp.openAi("gpt-4o", 100, false);
		assertThat(SimHttp.post(simulator, path, body).statusCode()).isEqualTo(status);
		assertThat(SimHttp.post(simulator, path, body).statusCode()).isEqualTo(200);
	}

	@Test
	void sendsGarbageRateLimitHeaders(ProviderSimulator simulator) {
		simulator.faults().next(Fault.GARBAGE_HEADERS);
		HttpResponse<String> response = SimHttp.post(simulator, "/v1/chat/completions",
				SimHttp.openAi("gpt-4o", 100, false));
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.headers().firstValue("x-ratelimit-remaining-tokens")).hasValue("lots");
	}

	@Test
	void delaysHeadersBySimulatorTime(ProviderSimulator simulator) {
		simulator.faults().headerDelay(Duration.ofSeconds(30)).next(Fault.DELAY_HEADERS);
		CompletableFuture<HttpResponse<InputStream>> call = SimHttp.open(simulator, "/v1/chat/completions",
				SimHttp.openAi("gpt-4o", 100, false));
		await().atMost(Duration.ofSeconds(5)).until(() -> clock.pendingWaits() == 1);
		assertThat(call).isNotDone();
		clock.advance(Duration.ofSeconds(30));
		assertThat(call.join().statusCode()).isEqualTo(200);
	}

}
