package dev.llmquota.test.simulator;

import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;

import dev.llmquota.test.junit.ProviderSimulatorExtension;
import dev.llmquota.test.simulator.RequestRecord.Outcome;
import dev.llmquota.test.simulator.clock.ManualSimClock;
import dev.llmquota.test.simulator.dialect.Operation;
import dev.llmquota.test.simulator.quota.Dimension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Embeddings in every dialect: their answers, and books that meter their input and
 * requests but never any output.
 */
class EmbeddingsTests {

	private static final long TOKENS_PER_MINUTE = 100_000;

	static final ManualSimClock clock = new ManualSimClock();

	@RegisterExtension
	static final ProviderSimulatorExtension extension = new ProviderSimulatorExtension(ProviderSimulator.builder()
		.clock(clock)
		.latency((latency) -> latency.fixedOutputTokens(20))
		.defaultModel((limits) -> limits.requestsPerMinute(1000).tokensPerMinute(TOKENS_PER_MINUTE))
		.model("tiny-embedder", (limits) -> limits.tokensPerMinute(1000))
		.model("gemini-2.5-flash", (limits) -> limits.outputTokensPerMinute(20))
		.model("embed-once", (limits) -> limits.requestsPerMinute(1)));

	@ParameterizedTest
	@CsvSource(delimiter = '|',
			textBlock = """
					/v1/embeddings                                                     | text-embedding-3-small   | {"model":"text-embedding-3-small","input":["Hello there","General Kenobi"]} | /data                | 2 | /usage/prompt_tokens
					/openai/deployments/embed-small/embeddings?api-version=2024-10-21 | embed-small              | {"input":"Hello there"}                                                      | /data                | 1 | /usage/prompt_tokens
					/v1beta/models/text-embedding-004:embedContent                     | text-embedding-004       | {"content":{"parts":[{"text":"Hello there"}]}}                               | /embedding/values    | 0 | -
					/v1beta/models/text-embedding-004:batchEmbedContents               | text-embedding-004       | {"requests":[{"model":"models/text-embedding-004","content":{"parts":[{"text":"a"}]}},{"model":"models/text-embedding-004","content":{"parts":[{"text":"bb"}]}},{"model":"models/text-embedding-004","content":{"parts":[{"text":"ccc"}]}}]} | /embeddings | 3 | -
					/api/embed                                                         | all-minilm               | {"model":"all-minilm","input":["Hello there","General Kenobi"]}              | /embeddings          | 2 | /prompt_eval_count
					/model/amazon.titan-embed-text-v2%3A0/invoke                       | amazon.titan-embed-text-v2:0 | {"inputText":"Hello there, General Kenobi"}                              | /embedding           | 0 | /inputTextTokenCount
					""")
	void metersEmbeddingsByInputAndRequestsOnly(String path, String model, String body, String embeddings, int count,
			String usage, ProviderSimulator simulator) {
		HttpResponse<String> response = SimHttp.post(simulator, path, body);
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.headers().firstValue("content-type")).hasValue("application/json");
		JsonNode json = SimHttp.json(response);
		JsonNode vectors = json.at(embeddings);
		if (count == 0) {
			assertThat(vectors.isArray()).isTrue();
			assertThat(vectors).isNotEmpty().allSatisfy((value) -> assertThat(value.isNumber()).isTrue());
		}
		else {
			assertThat(vectors).hasSize(count);
		}
		await().atMost(Duration.ofSeconds(5)).until(() -> simulator.requestLog().size() == 1);
		RequestRecord record = simulator.requestLog().records().get(0);
		assertThat(record.operation()).isEqualTo(Operation.EMBEDDINGS);
		assertThat(record.model()).isEqualTo(model);
		assertThat(record.outcome()).isEqualTo(Outcome.COMPLETED);
		assertThat(record.stream()).isFalse();
		assertThat(record.inputTokens()).isPositive();
		assertThat(record.maxTokens()).isZero();
		assertThat(record.outputTokens()).isZero();
		if (!"-".equals(usage)) {
			assertThat(json.at(usage).asLong()).isEqualTo(record.inputTokens());
		}
		assertThat(simulator.remaining(model, Dimension.TOKENS_PER_MINUTE))
			.isEqualTo(TOKENS_PER_MINUTE - record.inputTokens());
		assertThat(simulator.remaining(model, Dimension.REQUESTS_PER_MINUTE)).isEqualTo(999);
	}

	@ParameterizedTest
	@CsvSource({ "/v1/embeddings", "/openai/deployments/embed-small/embeddings",
			"/v1beta/models/text-embedding-004:embedContent", "/v1beta/models/text-embedding-004:batchEmbedContents",
			"/api/embed", "/model/amazon.titan-embed-text-v2:0/invoke" })
	void logsAnUnreadableEmbeddingsCallAsAnEmbeddingsCall(String path, ProviderSimulator simulator) {
		assertThat(SimHttp.post(simulator, path, "{}").statusCode()).isEqualTo(400);
		await().atMost(Duration.ofSeconds(5)).until(() -> simulator.requestLog().size() == 1);
		RequestRecord record = simulator.requestLog().records().get(0);
		assertThat(record.outcome()).isEqualTo(Outcome.BAD_REQUEST);
		assertThat(record.operation()).isEqualTo(Operation.EMBEDDINGS);
	}

	@Test
	void answersOpenAiEmbeddingsWithOneEmbeddingPerInputAndInputOnlyUsage(ProviderSimulator simulator) {
		HttpResponse<String> response = SimHttp.post(simulator, "/v1/embeddings",
				"{\"model\":\"text-embedding-3-small\",\"input\":[\"Hello there\",\"General Kenobi\"]}");
		JsonNode body = SimHttp.json(response);
		assertThat(body.get("object").stringValue()).isEqualTo("list");
		assertThat(body.get("model").stringValue()).isEqualTo("text-embedding-3-small");
		for (int i = 0; i < 2; i++) {
			JsonNode embedding = body.at("/data/" + i);
			assertThat(embedding.get("object").stringValue()).isEqualTo("embedding");
			assertThat(embedding.get("index").asInt()).isEqualTo(i);
			assertThat(embedding.get("embedding")).isNotEmpty()
				.allSatisfy((value) -> assertThat(value.isNumber()).isTrue());
		}
		long prompt = body.at("/usage/prompt_tokens").asLong();
		assertThat(body.at("/usage/total_tokens").asLong()).isEqualTo(prompt);
		assertThat(body.at("/usage").has("completion_tokens")).isFalse();
		assertThat(response.headers().firstValue("x-ratelimit-limit-tokens"))
			.hasValue(Long.toString(TOKENS_PER_MINUTE));
		assertThat(response.headers().firstValue("x-ratelimit-remaining-tokens"))
			.hasValue(Long.toString(TOKENS_PER_MINUTE - prompt));
		assertThat(response.headers().firstValue("x-ratelimit-remaining-requests")).hasValue("999");
		assertThat(response.headers().firstValue("x-ratelimit-reset-tokens")).isPresent();
	}

	@Test
	void countsOpenAiTokenArraysAsTheirLength(ProviderSimulator simulator) {
		JsonNode many = SimHttp.json(SimHttp.post(simulator, "/v1/embeddings",
				"{\"model\":\"text-embedding-3-small\",\"input\":[[1,2,3],[4,5]]}"));
		assertThat(many.get("data")).hasSize(2);
		assertThat(many.at("/usage/prompt_tokens").asLong()).isEqualTo(5);
		JsonNode one = SimHttp.json(SimHttp.post(simulator, "/v1/embeddings",
				"{\"model\":\"text-embedding-3-small\",\"input\":[1,2,3,4]}"));
		assertThat(one.get("data")).hasSize(1);
		assertThat(one.at("/usage/prompt_tokens").asLong()).isEqualTo(4);
	}

	@Test
	void answersOpenAiBase64EmbeddingsAsLittleEndianFloats(ProviderSimulator simulator) {
		JsonNode floats = SimHttp.json(SimHttp.post(simulator, "/v1/embeddings",
				"{\"model\":\"text-embedding-3-small\",\"input\":\"Hello\"}"));
		JsonNode base64 = SimHttp.json(SimHttp.post(simulator, "/v1/embeddings",
				"{\"model\":\"text-embedding-3-small\",\"input\":\"Hello\",\"encoding_format\":\"base64\"}"));
		ByteBuffer bytes = ByteBuffer.wrap(Base64.getDecoder().decode(base64.at("/data/0/embedding").stringValue()))
			.order(ByteOrder.LITTLE_ENDIAN);
		JsonNode expected = floats.at("/data/0/embedding");
		assertThat(bytes.remaining()).isEqualTo(expected.size() * Float.BYTES);
		for (JsonNode value : expected) {
			assertThat(bytes.getFloat()).isEqualTo(value.floatValue());
		}
	}

	@Test
	void neverReservesADefaultCeilingForEmbeddings(ProviderSimulator simulator) {
		// a chat call naming no ceiling reserves the default 4096, more than this model's
		// whole minute
		assertThat(SimHttp
			.post(simulator, "/v1/chat/completions",
					"{\"model\":\"tiny-embedder\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")
			.statusCode()).isEqualTo(429);
		HttpResponse<String> response = SimHttp.post(simulator, "/v1/embeddings",
				"{\"model\":\"tiny-embedder\",\"input\":\"Hello there\"}");
		assertThat(response.statusCode()).isEqualTo(200);
		long prompt = SimHttp.json(response).at("/usage/prompt_tokens").asLong();
		assertThat(simulator.remaining("tiny-embedder", Dimension.TOKENS_PER_MINUTE)).isEqualTo(1000 - prompt);
	}

	@Test
	void admitsEmbeddingsWhenTheOutputMeterIsSpent(ProviderSimulator simulator) {
		String generate = "/v1beta/models/gemini-2.5-flash:generateContent";
		assertThat(SimHttp.post(simulator, generate, SimHttp.gemini(100)).statusCode()).isEqualTo(200);
		assertThat(simulator.remaining("gemini-2.5-flash", Dimension.OUTPUT_TOKENS_PER_MINUTE)).isZero();
		assertThat(SimHttp.post(simulator, generate, SimHttp.gemini(100)).statusCode()).isEqualTo(429);
		assertThat(SimHttp
			.post(simulator, "/v1beta/models/gemini-2.5-flash:embedContent",
					"{\"content\":{\"parts\":[{\"text\":\"Hello there\"}]}}")
			.statusCode()).isEqualTo(200);
		assertThat(simulator.remaining("gemini-2.5-flash", Dimension.OUTPUT_TOKENS_PER_MINUTE)).isZero();
	}

	@Test
	void reportsTitanTokenCountsInBedrockHeaders(ProviderSimulator simulator) {
		HttpResponse<String> response = SimHttp.post(simulator, "/model/amazon.titan-embed-text-v2%3A0/invoke",
				"{\"inputText\":\"Hello there, General Kenobi\"}");
		long count = SimHttp.json(response).get("inputTextTokenCount").asLong();
		assertThat(response.headers().firstValue("x-amzn-bedrock-input-token-count")).hasValue(Long.toString(count));
		assertThat(response.headers().firstValue("x-amzn-bedrock-output-token-count")).hasValue("0");
		assertThat(response.headers().firstValue("x-amzn-bedrock-invocation-latency"))
			.hasValueSatisfying((latency) -> assertThat(latency).matches("\\d+"));
		assertThat(response.headers().firstValue("x-amzn-RequestId")).isPresent();
	}

	@Test
	void answersGeminiEmbedContentWithoutUsage(ProviderSimulator simulator) {
		JsonNode body = SimHttp.json(SimHttp.post(simulator, "/v1beta/models/text-embedding-004:embedContent",
				"{\"content\":{\"parts\":[{\"text\":\"Hello there\"}]}}"));
		assertThat(body.properties()).extracting(Map.Entry::getKey).containsExactly("embedding");
		assertThat(body.at("/embedding").properties()).extracting(Map.Entry::getKey).containsExactly("values");
	}

	@Test
	void namesTheEmbeddingsOperationInAzureRefusals(ProviderSimulator simulator) {
		String path = "/openai/deployments/embed-once/embeddings?api-version=2024-10-21";
		assertThat(SimHttp.post(simulator, path, "{\"input\":\"Hello\"}").statusCode()).isEqualTo(200);
		HttpResponse<String> refused = SimHttp.post(simulator, path, "{\"input\":\"Hello\"}");
		assertThat(refused.statusCode()).isEqualTo(429);
		assertThat(SimHttp.json(refused).at("/error/message").stringValue()).startsWith(
				"Requests to the Embeddings_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded "
						+ "call rate limit");
		await().atMost(Duration.ofSeconds(5)).until(() -> simulator.requestLog().refused().size() == 1);
		assertThat(simulator.requestLog().refused().get(0).operation()).isEqualTo(Operation.EMBEDDINGS);
	}

}
