package dev.llmquota.provider;

import java.net.URI;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Where each dialect's calls name their model, output ceiling and input.
 */
class DialectRequestTests {

	private static JsonNode json(String text) {
		return JsonMapper.shared().readTree(text);
	}

	@Test
	void openAiTakesTheLargerOfMaxTokensAndMaxCompletionTokens() {
		Dialect openai = Dialect.of(DialectId.OPENAI);
		JsonNode body = json(
				"""
						{"model":"gpt-4o","max_tokens":100,"max_completion_tokens":800,"stream":true,
						 "messages":[{"role":"system","content":"Be brief."},
						             {"role":"user","content":[{"type":"text","text":"Summarise this."},
						                                       {"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}],
						 "tools":[{"type":"function","function":{"name":"lookup","parameters":{"type":"object"}}}]}""");
		URI uri = URI.create("https://api.openai.com/v1/chat/completions");
		assertThat(openai.model(uri, body)).isEqualTo("gpt-4o");
		assertThat(openai.outputCeiling(body)).isEqualTo(800);
		assertThat(openai.streaming(uri, body)).isTrue();
		InputText input = openai.inputText(body);
		assertThat(input.text()).contains("Be brief.").contains("Summarise this.").doesNotContain("base64");
		assertThat(input.messages()).isEqualTo(2);
		assertThat(input.structure()).contains("lookup");
	}

	@Test
	void aCallAsksForTheChoicesItsDialectNamesWithinBounds() {
		Dialect openai = Dialect.of(DialectId.OPENAI);
		assertThat(openai.choices(json("{\"n\":3}"))).isEqualTo(3);
		assertThat(openai.choices(json("{\"n\":2,\"best_of\":5}"))).as("best_of generates, n returns").isEqualTo(5);
		assertThat(Dialect.of(DialectId.AZURE_OPENAI).choices(json("{\"best_of\":4}"))).isEqualTo(4);
		assertThat(Dialect.of(DialectId.GEMINI).choices(json("{\"generationConfig\":{\"candidateCount\":2}}")))
			.isEqualTo(2);
		assertThat(Dialect.of(DialectId.GEMINI).choices(json("{\"generation_config\":{\"candidate_count\":3}}")))
			.isEqualTo(3);
		assertThat(Dialect.of(DialectId.ANTHROPIC).choices(json("{\"n\":3}"))).as("not Anthropic's").isEqualTo(1);
		for (String garbage : new String[] { "{}", "{\"n\":0}", "{\"n\":-2}", "{\"n\":\"3\"}", "{\"n\":1.5e40}",
				"{\"n\":null}" }) {
			assertThat(openai.choices(json(garbage))).as(garbage).isEqualTo(1);
		}
		assertThat(openai.choices(json("{\"n\":9223372036854775807}"))).isEqualTo(Dialect.MOST_CHOICES);
	}

	/**
	 * A stored response's or completion's own operations run no model (a background
	 * response's cancel, a completion's metadata update): neither governed directly nor
	 * sent down a route, where only the deployment holding it knows it.
	 */
	@Test
	void aStoredResponsesOrCompletionsOwnOperationsSpendNoQuota() {
		Dialect openai = Dialect.of(DialectId.OPENAI);
		assertThat(openai.spendsQuota("/v1/responses/resp_123/cancel", 0)).isFalse();
		assertThat(openai.spendsQuota("/v1/chat/completions/chatcmpl_123", 0)).isFalse();
		assertThat(openai.spendsQuota("/v1/responses", 0)).isTrue();
		assertThat(openai.spendsQuota("/v1/responses/", 0)).as("a trailing slash").isTrue();
		assertThat(openai.spendsQuota("/v1/chat/completions", 0)).isTrue();
		assertThat(openai.spendsQuota("/v1/completions", 0)).isTrue();
		assertThat(openai.spendsQuota("/v1/responses/compact", 0)).as("a model compacts the context").isTrue();
		Dialect azure = Dialect.of(DialectId.AZURE_OPENAI);
		assertThat(azure.spendsQuota("/openai/deployments/responses/chat/completions", 0))
			.as("a deployment named responses")
			.isTrue();
		assertThat(azure.spendsQuota("/openai/v1/responses/resp_123/cancel", 0)).isFalse();
	}

	@Test
	void aDeploymentOrModelNamedLikeAnEndpointStillSpendsQuota() {
		assertThat(Dialect.of(DialectId.AZURE_OPENAI).spendsQuota("/openai/deployments/files/chat/completions", 0))
			.isTrue();
		assertThat(Dialect.of(DialectId.GEMINI)
			.spendsQuota("/v1/projects/batches/locations/us-central1/publishers/google/models/gemini-2.5-pro"
					+ ":generateContent", 0))
			.as("a Vertex project named batches")
			.isTrue();
		assertThat(Dialect.of(DialectId.OLLAMA).spendsQuota("/api/chat/completions", 0)).isTrue();
		assertThat(Dialect.of(DialectId.OLLAMA).spendsQuota("/v1/chat/completions", 0)).isTrue();
		assertThat(Dialect.of(DialectId.OLLAMA).spendsQuota("/api/chat", 0)).isTrue();
		assertThat(Dialect.of(DialectId.ANTHROPIC).spendsQuota("/v1/messages", 0)).isTrue();
		assertThat(Dialect.of(DialectId.OPENAI).spendsQuota("/v1/files", 0)).isFalse();
		assertThat(Dialect.of(DialectId.OPENAI).spendsQuota("/v1/files/", 0)).as("a trailing slash").isFalse();
		assertThat(Dialect.of(DialectId.OPENAI).spendsQuota("files", 0)).isFalse();
	}

	/**
	 * A request carrying a document inline larger than Jackson's default bound on a
	 * string (20 million characters: a 16 MB PDF in base64) is read, the document counted
	 * as one medium: failing to read it, llm-quota would estimate the request by its
	 * length, six million tokens.
	 */
	@Test
	void aRequestCarryingMediaLargerThanJacksonsStringBoundIsRead() {
		String document = "A".repeat(21_000_000);
		String text = "{\"model\":\"claude\",\"max_tokens\":100,\"messages\":[{\"role\":\"user\",\"content\":["
				+ "{\"type\":\"document\",\"source\":{\"type\":\"base64\",\"media_type\":\"application/pdf\","
				+ "\"data\":\"" + document + "\"}},{\"type\":\"text\",\"text\":\"Summarise this.\"}]}]}";
		ParsedRequest read = ParsedRequest.read(text.getBytes(StandardCharsets.UTF_8), Dialect.of(DialectId.ANTHROPIC));
		assertThat(read.input().text()).isEqualTo("Summarise this.");
		assertThat(read.input().counted()).isEqualTo(InputText.MEDIA_TOKENS);
		assertThat(Dialect.of(DialectId.ANTHROPIC).outputCeiling(read.fields())).isEqualTo(100);
	}

	@Test
	void aRequestIsReadInOnePassItsTextNeverATree() {
		Dialect openai = Dialect.of(DialectId.OPENAI);
		String text = """
				{"instructions":"Be kind.","model":"gpt-5","messages":[{"role":"user","content":"Hi there",
				  "name":"ann","image_url":{"url":"x"}},{"role":"user","content":["a", null, 3, {"text":"b"}]}],
				 "max_output_tokens":2000,"stream":false,"tools":[{"type":"function","name":"f"}],"input":null}""";
		ParsedRequest read = ParsedRequest.read(text.getBytes(StandardCharsets.UTF_8), openai);
		// in the shape's order (messages, input, instructions), as read from a tree
		assertThat(read.input()).isEqualTo(openai.inputText(json(text)));
		// every string a provider counts, a message's name too; a number as a token, an
		// image by its address as a medium
		assertThat(read.input().text()).isEqualTo("Hi there\nann\na\nb\nBe kind.");
		assertThat(read.input().counted()).isEqualTo(1 + InputText.MEDIA_TOKENS);
		assertThat(read.input().messages()).isEqualTo(3);
		assertThat(read.input().structure()).isEqualTo("[{\"type\":\"function\",\"name\":\"f\"}]");
		// the rest, as a tree the dialect reads: no messages kept
		assertThat(read.fields().propertyNames()).containsExactly("model", "max_output_tokens", "stream", "tools");
		assertThat(openai.outputCeiling(read.fields())).isEqualTo(2000);
		assertThat(read.withModel("gpt-5-mini").fields().get("model").asString()).isEqualTo("gpt-5-mini");
		assertThat(read.fields().get("model").asString()).isEqualTo("gpt-5");
	}

	@Test
	void theFieldsKeptAreTheTreeTheMapperWouldRead() {
		Dialect openai = Dialect.of(DialectId.OPENAI);
		String text = """
				{"model":"gpt-5","max_tokens":2147483648,"n":1,"seed":123456789012345678901234567890,
				 "temperature":0.25,"top_p":1e-3,"stream":true,"user":null,"store":false,
				 "messages":[{"role":"user","content":"Hi"}],
				 "tools":[{"type":"function","function":{"name":"f","strict":true,"parameters":{"type":"object",
				   "properties":{},"required":[],"enum":[1,2.5,"x",null,[[]]]}}}],
				 "response_format":{"type":"json_schema","json_schema":{"name":"a","schema":{}}}}""";
		ParsedRequest read = ParsedRequest.read(text.getBytes(StandardCharsets.UTF_8), openai);
		JsonNode expected = json(text);
		((tools.jackson.databind.node.ObjectNode) expected).remove("messages");
		assertThat(read.fields()).isEqualTo(expected);
		assertThat(read.fields().get("max_tokens").isLong()).isTrue();
		assertThat(read.fields().get("n").isInt()).isTrue();
		assertThat(read.fields().get("seed").isBigInteger()).isTrue();
	}

	@Test
	void aRequestThatIsNotOneJsonObjectIsNotRead() {
		Dialect openai = Dialect.of(DialectId.OPENAI);
		assertThat(ParsedRequest.read("[1]".getBytes(StandardCharsets.UTF_8), openai)).isNull();
		assertThatThrownBy(() -> ParsedRequest.read("{\"model\":\"m\"} {}".getBytes(StandardCharsets.UTF_8), openai))
			.isInstanceOf(tools.jackson.core.JacksonException.class);
		assertThatThrownBy(
				() -> ParsedRequest.read("{\"messages\":[{\"content\":\"cut".getBytes(StandardCharsets.UTF_8), openai))
			.isInstanceOf(tools.jackson.core.JacksonException.class);
	}

	@Test
	void openAiResponsesApiReadsMaxOutputTokensAndInput() {
		Dialect openai = Dialect.of(DialectId.OPENAI);
		JsonNode body = json("""
				{"model":"gpt-5","max_output_tokens":2000,"instructions":"Be kind.","input":"Hello there"}""");
		assertThat(openai.outputCeiling(body)).isEqualTo(2000);
		assertThat(openai.inputText(body).text()).contains("Be kind.").contains("Hello there");
	}

	@Test
	void azureNamesTheDeploymentInThePath() {
		Dialect azure = Dialect.of(DialectId.AZURE_OPENAI);
		URI uri = URI.create(
				"https://contoso-eus2.openai.azure.com/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21");
		assertThat(azure.model(uri, json("{\"max_tokens\":800,\"messages\":[]}"))).isEqualTo("gpt-4o-prod");
		assertThat(azure.outputCeiling(json("{\"max_tokens\":800}"))).isEqualTo(800);
	}

	@Test
	void bedrockNamesTheModelInThePathDecodedOnce() {
		Dialect bedrock = Dialect.of(DialectId.BEDROCK);
		URI profile = URI.create(
				"https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse");
		URI arn = URI.create(
				"https://bedrock-runtime.us-east-1.amazonaws.com/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123%3Ainference-profile%2Fus.meta.llama3/converse-stream");
		JsonNode body = json("""
				{"messages":[{"role":"user","content":[{"text":"Hi"}]}],"system":[{"text":"Short."}],
				 "inferenceConfig":{"maxTokens":512}}""");
		assertThat(bedrock.model(profile, body)).isEqualTo("us.anthropic.claude-sonnet-4-5-20250929-v1:0");
		assertThat(bedrock.model(arn, body))
			.isEqualTo("arn:aws:bedrock:us-east-1:123:inference-profile/us.meta.llama3");
		assertThat(bedrock.outputCeiling(body)).isEqualTo(512);
		assertThat(bedrock.streaming(profile, body)).isFalse();
		assertThat(bedrock.streaming(arn, body)).isTrue();
		assertThat(bedrock.framing(true)).isEqualTo(Framing.EVENT_STREAM);
		assertThat(bedrock.inputText(body).text()).contains("Hi").contains("Short.");
	}

	@Test
	void geminiNamesTheModelBeforeTheMethod() {
		Dialect gemini = Dialect.of(DialectId.GEMINI);
		URI uri = URI.create(
				"https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
		URI vertex = URI.create(
				"https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro:generateContent");
		JsonNode body = json(
				"""
						{"contents":[{"role":"user","parts":[{"text":"Hello"},{"inlineData":{"mimeType":"image/png","data":"%s"}}]}],
						 "systemInstruction":{"parts":[{"text":"Be terse."}]},"generationConfig":{"maxOutputTokens":1024}}"""
					.formatted("AAAA".repeat(2_000)));
		assertThat(gemini.model(uri, body)).isEqualTo("gemini-2.5-flash");
		assertThat(gemini.model(vertex, body)).isEqualTo("gemini-2.5-pro");
		assertThat(gemini.streaming(uri, body)).isTrue();
		assertThat(gemini.streaming(vertex, body)).isFalse();
		assertThat(gemini.outputCeiling(body)).isEqualTo(1024);
		assertThat(gemini.inputText(body).text()).contains("Hello").contains("Be terse.").doesNotContain("AAAA");
		assertThat(gemini.inputText(body).counted()).isEqualTo(InputText.MEDIA_TOKENS);
	}

	@Test
	void ollamaStreamsByDefaultAndTreatsNegativeNumPredictAsNoCeiling() {
		Dialect ollama = Dialect.of(DialectId.OLLAMA);
		URI uri = URI.create("http://localhost:11434/api/chat");
		assertThat(ollama.streaming(uri, json("{\"model\":\"llama3\"}"))).isTrue();
		assertThat(ollama.streaming(uri, json("{\"model\":\"llama3\",\"stream\":false}"))).isFalse();
		assertThat(ollama.framing(true)).isEqualTo(Framing.NDJSON);
		assertThat(ollama.outputCeiling(json("{\"options\":{\"num_predict\":256}}"))).isEqualTo(256);
		assertThat(ollama.outputCeiling(json("{\"options\":{\"num_predict\":-1}}"))).isNull();
	}

	@Test
	void anthropicCountsSystemMessagesAndTools() {
		Dialect anthropic = Dialect.of(DialectId.ANTHROPIC);
		JsonNode body = json("""
				{"model":"claude-sonnet-4-5","max_tokens":1024,"system":"You are terse.",
				 "messages":[{"role":"user","content":[{"type":"text","text":"Hi"},
				   {"type":"image","source":{"type":"base64","media_type":"image/png","data":"%s"}}]}],
				 "tools":[{"name":"get_weather","input_schema":{"type":"object"}}]}""".formatted("AAAA".repeat(2_000)));
		assertThat(anthropic.outputCeiling(body)).isEqualTo(1024);
		InputText input = anthropic.inputText(body);
		assertThat(input.text()).contains("You are terse.").contains("Hi").doesNotContain("AAAA");
		assertThat(input.counted()).isEqualTo(InputText.MEDIA_TOKENS);
		assertThat(input.messages()).isEqualTo(2);
		assertThat(input.structure()).contains("get_weather");
	}

	@Test
	void everyDialectNamesItsEndpointsThatGenerateNothing() {
		JsonNode body = json("{\"model\":\"m\",\"input\":\"two words\"}");
		assertThat(Dialect.of(DialectId.OPENAI).generates(URI.create("https://api.openai.com/v1/embeddings"), body))
			.isFalse();
		assertThat(Dialect.of(DialectId.OPENAI).generates(URI.create("https://api.openai.com/v1/moderations"), body))
			.isFalse();
		assertThat(
				Dialect.of(DialectId.OPENAI).generates(URI.create("https://api.openai.com/v1/chat/completions"), body))
			.isTrue();
		assertThat(Dialect.of(DialectId.AZURE_OPENAI)
			.generates(URI.create("https://x.openai.azure.com/openai/deployments/ada/embeddings?api-version=1"), body))
			.isFalse();
		assertThat(Dialect.of(DialectId.GEMINI)
			.generates(URI.create("https://generativelanguage.googleapis.com/v1beta/models/e5:embedContent"), body))
			.isFalse();
		assertThat(Dialect.of(DialectId.GEMINI)
			.generates(URI.create("https://generativelanguage.googleapis.com/v1beta/models/e5:batchEmbedContents"),
					body))
			.isFalse();
		assertThat(Dialect.of(DialectId.OLLAMA).generates(URI.create("http://localhost:11434/api/embed"), body))
			.isFalse();
		assertThat(Dialect.of(DialectId.BEDROCK)
			.generates(URI
				.create("https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.titan-embed-text-v2%3A0/invoke"),
					json("{\"inputText\":\"two words\"}")))
			.isFalse();
		assertThat(Dialect.of(DialectId.BEDROCK)
			.generates(URI.create("https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude/invoke"),
					json("{\"max_tokens\":5}")))
			.isTrue();
	}

	@Test
	void embeddingInputsAreReadFromTheFieldsEachProviderTakesThem() {
		assertThat(Dialect.of(DialectId.OPENAI).inputText(json("{\"input\":[\"alpha\",\"beta\"]}")).text())
			.contains("alpha")
			.contains("beta");
		assertThat(
				Dialect.of(DialectId.GEMINI).inputText(json("{\"content\":{\"parts\":[{\"text\":\"gamma\"}]}}")).text())
			.isEqualTo("gamma");
		assertThat(Dialect.of(DialectId.GEMINI)
			.inputText(json(
					"{\"requests\":[{\"model\":\"models/text-embedding-004\",\"content\":{\"parts\":[{\"text\":\"delta\"}]}}]}"))
			.text()).isEqualTo("delta");
		assertThat(Dialect.of(DialectId.BEDROCK).inputText(json("{\"inputText\":\"epsilon\"}")).text())
			.isEqualTo("epsilon");
		assertThat(Dialect.of(DialectId.OLLAMA).inputText(json("{\"input\":\"zeta\"}")).text()).isEqualTo("zeta");
	}

}
