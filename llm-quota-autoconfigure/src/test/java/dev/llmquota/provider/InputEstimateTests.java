package dev.llmquota.provider;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.llmquota.tokens.TokenEstimator;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a request's input is estimated at before admission: every string a provider counts
 * is counted, wherever it sits, and what no tokenizer reads (media given inline, token
 * ids) is counted apart. An under-estimate admits calls the provider then refuses.
 */
class InputEstimateTests {

	private static final TokenEstimator O200K = TokenEstimator.of("o200k_base");

	private static final TokenEstimator CHARS4 = TokenEstimator.of("chars:4");

	private static JsonNode json(String text) {
		return JsonMapper.shared().readTree(text);
	}

	private static long estimate(DialectId dialect, String body, TokenEstimator estimator) {
		InputText input = ParsedRequest.read(body.getBytes(StandardCharsets.UTF_8), Dialect.of(dialect)).input();
		return estimator.estimate(input.text(), input.structure(), input.messages(), input.counted());
	}

	/**
	 * 300 orders as a tool returns them: compact JSON, over 20,000 characters, no space.
	 */
	private static String compactToolResult() {
		List<Map<String, Object>> rows = new ArrayList<>();
		for (int i = 0; i < 300; i++) {
			Map<String, Object> row = new LinkedHashMap<>();
			row.put("orderId", "ORD-" + (100000 + i));
			row.put("status", "SHIPPED");
			row.put("customer", "customer" + i + "@example.com");
			rows.add(row);
		}
		return JsonMapper.shared().writeValueAsString(rows);
	}

	@Test
	void aLongStringWithoutASpaceIsTextUnlessItIsBase64() {
		String result = compactToolResult();
		assertThat(result).hasSizeGreaterThan(20_000).doesNotContain(" ");
		String body = JsonMapper.shared()
			.writeValueAsString(Map.of("model", "gpt-4o", "max_tokens", 100, "messages",
					List.of(Map.of("role", "user", "content", "List my orders"),
							Map.of("role", "tool", "tool_call_id", "call_1", "content", result))));
		assertThat(estimate(DialectId.OPENAI, body, O200K)).as("the tool result alone")
			.isGreaterThanOrEqualTo(O200K.count(result));
		String chinese = "我们的季度报告显示销售额增长了百分之十二，主要得益于亚洲市场的强劲需求。".repeat(150);
		String claude = JsonMapper.shared()
			.writeValueAsString(Map.of("model", "claude-sonnet-4-5", "max_tokens", 100, "messages",
					List.of(Map.of("role", "user", "content", chinese))));
		assertThat(estimate(DialectId.ANTHROPIC, claude, CHARS4)).isGreaterThanOrEqualTo(chinese.length() / 4);
	}

	@Test
	void aToolResultsRowsUnderDataAreCounted() {
		StringBuilder rows = new StringBuilder();
		for (int i = 0; i < 200; i++) {
			rows.append((i == 0) ? "" : ",")
				.append("{\"title\":\"Quarterly revenue report for region ")
				.append(i)
				.append("\",\"summary\":\"Revenue grew by twelve percent on strong demand in Asia.\"}");
		}
		String gemini = "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Find reports\"}]},"
				+ "{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"name\":\"search\",\"args\":{}}}]},"
				+ "{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"name\":\"search\",\"response\":{\"data\":["
				+ rows + "]}}}]}],\"generationConfig\":{\"maxOutputTokens\":256}}";
		assertThat(estimate(DialectId.GEMINI, gemini, CHARS4)).isGreaterThanOrEqualTo(rows.length() / 8);
		String bedrock = "{\"messages\":[{\"role\":\"user\",\"content\":[{\"toolResult\":{\"toolUseId\":\"t1\","
				+ "\"content\":[{\"json\":{\"data\":[" + rows + "]}}]}}]}],\"inferenceConfig\":{\"maxTokens\":256}}";
		assertThat(estimate(DialectId.BEDROCK, bedrock, CHARS4)).isGreaterThanOrEqualTo(rows.length() / 8);
	}

	@Test
	void anAnthropicPlainTextDocumentIsCounted() {
		String document = "The contract term is twelve months and renews automatically. ".repeat(200);
		String body = JsonMapper.shared()
			.writeValueAsString(
					Map.of("model", "claude-sonnet-4-5", "max_tokens", 100, "messages",
							List.of(Map.of(
									"role", "user", "content", List.of(
											Map.of("type", "document", "source",
													Map.of("type", "text", "media_type", "text/plain", "data",
															document)),
											Map.of("type", "text", "text", "Summarise the contract."))))));
		assertThat(estimate(DialectId.ANTHROPIC, body, CHARS4)).isGreaterThanOrEqualTo(document.length() / 4);
	}

	/**
	 * An image given inline counts as a flat estimate, not as the characters of its
	 * base64 (a quarter of a million tokens for a 1 MB image) nor as nothing.
	 */
	@Test
	void mediaGivenInlineCountsAsAFlatEstimate() {
		String base64 = "iVBORw0KGgo".repeat(20_000);
		String with = "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":100,\"messages\":[{\"role\":\"user\","
				+ "\"content\":[{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\","
				+ "\"data\":\"" + base64 + "\"}},{\"type\":\"text\",\"text\":\"What is this?\"}]}]}";
		String without = "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":100,\"messages\":[{\"role\":\"user\","
				+ "\"content\":[{\"type\":\"text\",\"text\":\"What is this?\"}]}]}";
		long plain = estimate(DialectId.ANTHROPIC, without, CHARS4);
		assertThat(estimate(DialectId.ANTHROPIC, with, CHARS4) - plain).isEqualTo(InputText.MEDIA_TOKENS);
		String openAi = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\","
				+ "\"image_url\":{\"url\":\"data:image/png;base64,iVBORw0KGgo\"}}]}]}";
		assertThat(estimate(DialectId.OPENAI, openAi, O200K)).isGreaterThanOrEqualTo(InputText.MEDIA_TOKENS)
			.isLessThan(2L * InputText.MEDIA_TOKENS);
		// by address too: OpenAI's image_url and files, Gemini's fileUri
		String byUrl = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\","
				+ "\"image_url\":{\"url\":\"https://example.com/cat.png\"}}]}]}";
		assertThat(estimate(DialectId.OPENAI, byUrl, O200K)).isGreaterThanOrEqualTo(InputText.MEDIA_TOKENS);
		String responses = "{\"model\":\"gpt-5\",\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_file\","
				+ "\"file_id\":\"file-abc\"},{\"type\":\"input_image\",\"image_url\":\"https://example.com/cat.png\"}]}]}";
		assertThat(estimate(DialectId.OPENAI, responses, O200K)).isGreaterThanOrEqualTo(2L * InputText.MEDIA_TOKENS);
		String gemini = "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"fileData\":{\"mimeType\":\"video/mp4\","
				+ "\"fileUri\":\"gs://bucket/clip.mp4\"}}]}]}";
		assertThat(estimate(DialectId.GEMINI, gemini, CHARS4)).isGreaterThanOrEqualTo(InputText.MEDIA_TOKENS);
	}

	@Test
	void inputGivenAsTokenIdsCountsATokenEach() {
		List<Integer> tokens = new ArrayList<>();
		for (int i = 0; i < 2_000; i++) {
			tokens.add(1000 + i);
		}
		String embeddings = JsonMapper.shared()
			.writeValueAsString(Map.of("model", "text-embedding-3-small", "input", List.of(tokens, tokens)));
		assertThat(estimate(DialectId.OPENAI, embeddings, O200K)).isGreaterThanOrEqualTo(4_000);
		String completions = JsonMapper.shared()
			.writeValueAsString(Map.of("model", "gpt-3.5-turbo-instruct", "max_tokens", 10, "prompt", tokens));
		assertThat(estimate(DialectId.OPENAI, completions, O200K)).isGreaterThanOrEqualTo(2_000);
	}

	@Test
	void bedrocksInvokeModelBodiesAreReadForTheirInputAndCeiling() {
		Dialect bedrock = Dialect.of(DialectId.BEDROCK);
		String anthropic = """
				{"anthropic_version":"bedrock-2023-05-31","max_tokens":512,
				 "messages":[{"role":"user","content":"Weather in Paris?"}],
				 "tools":[{"name":"get_weather","description":"Get the current weather for a city","input_schema":
				   {"type":"object","properties":{"city":{"type":"string","description":"The city"}}}}]}""";
		assertThat(bedrock.inputText(json(anthropic)).structure()).contains("get_weather");
		String prompt = "Explain the theory of relativity in simple words. ".repeat(40);
		JsonNode llama = json("{\"prompt\":\"" + prompt + "\",\"max_gen_len\":2048,\"temperature\":0.5}");
		assertThat(bedrock.inputText(llama).text()).contains("relativity");
		assertThat(bedrock.outputCeiling(llama)).isEqualTo(2048);
		assertThat(
				bedrock.outputCeiling(json("{\"inputText\":\"Hi\",\"textGenerationConfig\":{\"maxTokenCount\":8000}}")))
			.isEqualTo(8000);
		assertThat(bedrock.outputCeiling(json(
				"{\"schemaVersion\":\"messages-v1\",\"messages\":[],\"inferenceConfig\":{\"max_new_tokens\":10000}}")))
			.isEqualTo(10000);
	}

	/**
	 * A Responses call on a prompt template stored at OpenAI carries only its variables:
	 * the provider's count holds the template too, so it must not move the drift ratio.
	 */
	@Test
	void aResponsesCallOnAStoredPromptTemplateHasStoredInput() {
		assertThat(Dialect.of(DialectId.OPENAI).storedInput(json("""
				{"model":"gpt-5","prompt":{"id":"pmpt_abc123","version":"2","variables":{"city":"Paris"}},
				 "input":"Go."}"""))).isTrue();
		assertThat(Dialect.of(DialectId.OPENAI).storedInput(json("{\"model\":\"gpt-5\",\"input\":\"Go.\"}"))).isFalse();
	}

	@Test
	void ollamasOpenAiCompatibleCallsReadTheirMaxTokens() {
		Dialect ollama = Dialect.of(DialectId.OLLAMA);
		assertThat(ollama.outputCeiling(json("{\"model\":\"llama3\",\"max_tokens\":16000,\"messages\":[]}")))
			.isEqualTo(16000);
		assertThat(ollama.outputCeiling(json("{\"model\":\"llama3\",\"options\":{\"num_predict\":300}}")))
			.isEqualTo(300);
	}

}
