package dev.llmquota.provider;

import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import dev.llmquota.core.Dimension;
import dev.llmquota.core.ServerLimit;
import dev.llmquota.core.Usage;
import dev.llmquota.test.fixtures.RecordedFixture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import static dev.llmquota.core.Dimension.INPUT_TOKENS_PER_MINUTE;
import static dev.llmquota.core.Dimension.OUTPUT_TOKENS_PER_MINUTE;
import static dev.llmquota.core.Dimension.REQUESTS_PER_MINUTE;
import static dev.llmquota.core.Dimension.TOKENS_PER_MINUTE;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every recorded response in the shared fixtures, read by its dialect: the limits,
 * remaining counts, resets and usage must equal the values in the file.
 */
class RecordedFixtureParsingTests {

	@Test
	void openAiHeadersAndUsage() {
		RecordedFixture fixture = RecordedFixture.load("openai-200-with-headers.json");
		Instant date = Instant.parse("2025-10-14T09:21:07Z");
		assertThat(limits(fixture, DialectId.OPENAI)).containsOnly(
				Map.entry(REQUESTS_PER_MINUTE, limit(5000L, 4999L, date.plusMillis(12))),
				Map.entry(TOKENS_PER_MINUTE, limit(800000L, 797876L, date.plusMillis(159))));
		assertThat(usage(fixture, DialectId.OPENAI, false)).isEqualTo(new Usage(1096, 1024, 214));
	}

	@Test
	void openAiTpmRefusalHeaders() {
		RecordedFixture fixture = RecordedFixture.load("openai-429-tpm.json");
		Instant date = Instant.parse("2025-10-14T09:25:41Z");
		assertThat(limits(fixture, DialectId.OPENAI)).containsOnly(
				Map.entry(REQUESTS_PER_MINUTE, limit(500L, 497L, date.plusMillis(360))),
				Map.entry(TOKENS_PER_MINUTE, limit(30000L, 1048L, date.plusMillis(57_904))));
		assertThat(usage(fixture, DialectId.OPENAI, false)).isNull();
	}

	@Test
	void openAiStreamUsageFromTheFinalChunk() {
		RecordedFixture fixture = RecordedFixture.load("openai-stream-usage.json");
		Instant date = Instant.parse("2025-10-14T09:21:40Z");
		assertThat(limits(fixture, DialectId.OPENAI)).containsOnly(
				Map.entry(REQUESTS_PER_MINUTE, limit(5000L, 4999L, date.plusMillis(12))),
				Map.entry(TOKENS_PER_MINUTE, limit(4000000L, 3999730L, date.plusMillis(4))));
		assertThat(usage(fixture, DialectId.OPENAI, true)).isEqualTo(new Usage(14, 0, 3));
	}

	@Test
	void azureRefusalReportsRemainingWithoutLimits() {
		RecordedFixture fixture = RecordedFixture.load("azure-429-retry-after.json");
		assertThat(limits(fixture, DialectId.AZURE_OPENAI)).containsOnly(
				Map.entry(REQUESTS_PER_MINUTE, limit(null, 41L, null)),
				Map.entry(TOKENS_PER_MINUTE, limit(null, 0L, null)));
	}

	@Test
	void anthropicHeadersAndCacheAwareUsage() {
		RecordedFixture fixture = RecordedFixture.load("anthropic-200-with-headers.json");
		assertThat(limits(fixture, DialectId.ANTHROPIC)).containsOnly(
				Map.entry(REQUESTS_PER_MINUTE, limit(1000L, 999L, Instant.parse("2025-10-14T09:21:07Z"))),
				Map.entry(INPUT_TOKENS_PER_MINUTE, limit(450000L, 448000L, Instant.parse("2025-10-14T09:21:08Z"))),
				Map.entry(OUTPUT_TOKENS_PER_MINUTE, limit(90000L, 90000L, Instant.parse("2025-10-14T09:21:08Z"))),
				Map.entry(TOKENS_PER_MINUTE, limit(540000L, 538000L, Instant.parse("2025-10-14T09:21:08Z"))));
		// input_tokens counts only what follows the last cache breakpoint: 2,312 + 1,536
		// read from cache
		Usage usage = usage(fixture, DialectId.ANTHROPIC, false);
		assertThat(usage).isEqualTo(new Usage(3848, 1536, 187));
		assertThat(usage.billedInputTokens(false)).isEqualTo(2312);
	}

	@Test
	void anthropicStreamTakesInputFromMessageStartAndTheLastCumulativeOutput() {
		RecordedFixture fixture = RecordedFixture.load("anthropic-stream-usage.json");
		assertThat(limits(fixture, DialectId.ANTHROPIC)).containsEntry(OUTPUT_TOKENS_PER_MINUTE,
				limit(90000L, 90000L, Instant.parse("2025-10-14T09:21:07Z")));
		assertThat(usage(fixture, DialectId.ANTHROPIC, true)).isEqualTo(new Usage(3848, 1536, 187));
	}

	@Test
	void anthropicRefusalHeaders() {
		RecordedFixture fixture = RecordedFixture.load("anthropic-429-input-tokens.json");
		assertThat(limits(fixture, DialectId.ANTHROPIC)).containsOnly(
				Map.entry(REQUESTS_PER_MINUTE, limit(50L, 46L, Instant.parse("2025-10-14T09:30:05Z"))),
				Map.entry(INPUT_TOKENS_PER_MINUTE, limit(30000L, 0L, Instant.parse("2025-10-14T09:31:00Z"))),
				Map.entry(OUTPUT_TOKENS_PER_MINUTE, limit(8000L, 6000L, Instant.parse("2025-10-14T09:30:15Z"))),
				Map.entry(TOKENS_PER_MINUTE, limit(38000L, 6000L, Instant.parse("2025-10-14T09:31:00Z"))));
	}

	@Test
	void geminiUsageCountsThoughtsAsOutputAndCachedContentAsCachedInput() {
		RecordedFixture fixture = RecordedFixture.load("gemini-200-usage.json");
		assertThat(limits(fixture, DialectId.GEMINI)).isEmpty();
		assertThat(usage(fixture, DialectId.GEMINI, false)).isEqualTo(new Usage(2312, 1536, 187 + 312));
	}

	/**
	 * What provider-run tools (search grounding, code execution) fed the model is input,
	 * counted beside the prompt ({@code toolUsePromptTokenCount}, part of the total).
	 */
	@Test
	void geminiCountsToolUsePromptTokensAsInput() {
		ResponseReader reader = read(DialectId.GEMINI, Framing.JSON,
				"{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi\"}],\"role\":\"model\"},"
						+ "\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":12,"
						+ "\"candidatesTokenCount\":40,\"toolUsePromptTokenCount\":9000,\"totalTokenCount\":9052}}");
		assertThat(reader.usage().usage(999)).isEqualTo(new Usage(9012, 0, 40));
	}

	/**
	 * Gemini leaves out counts that are zero: a finished answer that generated nothing (a
	 * blocked prompt, an empty answer) is charged its input and no output, not its whole
	 * reservation.
	 */
	@Test
	void geminiAnswerThatGeneratedNothingIsChargedItsInput() {
		ResponseReader blocked = read(DialectId.GEMINI, Framing.JSON,
				"{\"promptFeedback\":{\"blockReason\":\"SAFETY\"},"
						+ "\"usageMetadata\":{\"promptTokenCount\":8,\"totalTokenCount\":8}}");
		assertThat(blocked.usage().usage(999)).isEqualTo(new Usage(8, 0, 0));
		ResponseReader empty = read(DialectId.GEMINI, Framing.JSON,
				"{\"candidates\":[{\"content\":{\"role\":\"model\"},\"finishReason\":\"STOP\"}],"
						+ "\"usageMetadata\":{\"promptTokenCount\":8,\"totalTokenCount\":8}}");
		assertThat(empty.usage().usage(999)).isEqualTo(new Usage(8, 0, 0));
		// a chunk of a stream still going names no output yet: nothing is assumed
		ResponseReader going = read(DialectId.GEMINI, Framing.SSE,
				"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hel\"}],\"role\":\"model\"}}],"
						+ "\"usageMetadata\":{\"promptTokenCount\":8,\"totalTokenCount\":8}}\n\n");
		assertThat(going.usage().usage(999)).isNull();
	}

	/**
	 * Gemini's stream has no closing event: its last chunk carries the finish and the
	 * counts, and ends it, so a client that stops reading there (before the connection's
	 * end) is charged the counts, not its whole reservation.
	 */
	@Test
	void geminisStreamEndsWithTheChunkThatFinishes() {
		ResponseReader reader = new ResponseReader(Dialect.of(DialectId.GEMINI), Framing.SSE);
		reader.feed(bytes("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hel\"}],\"role\":\"model\"}}],"
				+ "\"usageMetadata\":{\"promptTokenCount\":8,\"candidatesTokenCount\":1,\"totalTokenCount\":9}}\n\n"));
		assertThat(reader.usage().streamEnded()).as("a chunk before the last").isFalse();
		reader.feed(bytes("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"lo\"}],\"role\":\"model\"},"
				+ "\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":8,\"candidatesTokenCount\":2,"
				+ "\"totalTokenCount\":10}}\n\n"));
		assertThat(reader.usage().streamEnded()).as("the chunk that finishes").isTrue();
		assertThat(reader.usage().usage(999)).isEqualTo(new Usage(8, 0, 2));
		// of two candidates, one finished: the answer goes on
		ResponseReader two = read(DialectId.GEMINI, Framing.SSE,
				"data: {\"candidates\":[{\"index\":0,\"finishReason\":\"STOP\"},{\"index\":1,\"content\":{\"parts\":"
						+ "[{\"text\":\"and\"}]}}],\"usageMetadata\":{\"promptTokenCount\":8,\"totalTokenCount\":8}}\n\n");
		assertThat(two.usage().streamEnded()).as("one of two candidates finished").isFalse();
		assertThat(two.usage().usage(999)).as("nor is its output taken for none").isNull();
	}

	@Test
	void openAiEmbeddingsAreChargedTheirPromptTokensAndNoOutput() {
		RecordedFixture fixture = RecordedFixture.load("openai-embeddings-usage.json");
		assertThat(reader(fixture, DialectId.OPENAI, false).usage().usage(-1, false)).isEqualTo(new Usage(8, 0, 0));
		assertThat(Dialect.of(DialectId.OPENAI).generates(URI.create(fixture.request().orElseThrow().url()), null))
			.isFalse();
	}

	@Test
	void geminiEmbeddingsReportNoCountSoTheEstimateStands() {
		RecordedFixture fixture = RecordedFixture.load("gemini-embed-content.json");
		assertThat(reader(fixture, DialectId.GEMINI, false).usage().usage(-1, false)).isNull();
		assertThat(Dialect.of(DialectId.GEMINI).generates(URI.create(fixture.request().orElseThrow().url()), null))
			.isFalse();
	}

	@Test
	void openAiResponsesStreamUsageFromResponseCompleted() {
		RecordedFixture fixture = RecordedFixture.load("openai-responses-stream-usage.json");
		ResponseReader reader = reader(fixture, DialectId.OPENAI, true);
		assertThat(reader.usage().usage(-1)).isEqualTo(new Usage(37, 0, 11));
		assertThat(reader.usage().refusal()).isNull();
	}

	@Test
	void openAiResponsesStreamFailedWithARateLimitIsARefusalToWaitOut() {
		RecordedFixture fixture = RecordedFixture.load("openai-responses-stream-failed.json");
		ResponseReader reader = reader(fixture, DialectId.OPENAI, true);
		assertThat(reader.usage().hasUsage()).isFalse();
		assertThat(reader.usage().refusal()).isNotNull();
		Answer answer = Dialect.of(DialectId.OPENAI)
			.refusal(reader.usage().refusal(), Instant.parse("2025-03-01T19:04:29Z"));
		assertThat(answer.kind()).isEqualTo(Answer.Kind.RATE_LIMITED);
		assertThat(answer.dimension()).isEqualTo(TOKENS_PER_MINUTE);
		assertThat(answer.delay()).isEqualTo(Duration.ofMillis(84));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("refusals")
	void refusalsAndProvidersWithoutHeadersReportNoUsage(String name) {
		RecordedFixture fixture = RecordedFixture.load(name);
		DialectId dialect = dialectOf(fixture);
		assertThat(usage(fixture, dialect, false)).isNull();
		if (dialect == DialectId.BEDROCK || dialect == DialectId.GEMINI) {
			assertThat(limits(fixture, dialect)).isEmpty();
		}
	}

	static List<String> refusals() {
		return List.of("anthropic-529-overloaded.json", "bedrock-429-throttling.json", "bedrock-quota-exceeded.json",
				"gemini-429-resource-exhausted.json", "openai-429-insufficient-quota.json");
	}

	@Test
	void everyRecordedFixtureIsCovered() {
		assertThat(RecordedFixture.names()).containsExactlyInAnyOrder("anthropic-200-with-headers.json",
				"anthropic-429-input-tokens.json", "anthropic-529-overloaded.json", "anthropic-stream-usage.json",
				"azure-429-retry-after.json", "bedrock-429-throttling.json", "bedrock-quota-exceeded.json",
				"gemini-200-usage.json", "gemini-429-resource-exhausted.json", "gemini-embed-content.json",
				"openai-200-with-headers.json", "openai-429-insufficient-quota.json", "openai-429-tpm.json",
				"openai-embeddings-usage.json", "openai-responses-stream-failed.json",
				"openai-responses-stream-usage.json", "openai-stream-usage.json");
	}

	@Test
	void garbageAndSentinelHeadersAreLeftOut() {
		Map<String, String> headers = Map.of("x-ratelimit-limit-requests", "-1", "x-ratelimit-remaining-requests",
				"lots", "x-ratelimit-reset-requests", "soon", "x-ratelimit-limit-tokens", "30000",
				"x-ratelimit-remaining-tokens", "12e3", "x-ratelimit-reset-tokens", "6m0s");
		List<ServerLimit> limits = Dialect.of(DialectId.OPENAI)
			.rateLimits(headers::get, Instant.parse("2025-10-14T09:00:00Z"));
		assertThat(limits)
			.containsExactly(new ServerLimit(TOKENS_PER_MINUTE, 30000L, null, Instant.parse("2025-10-14T09:06:00Z")));
	}

	@Test
	void aStreamCutBeforeItsUsageReportsNoneButCountsItsText() {
		ResponseReader reader = new ResponseReader(Dialect.of(DialectId.OPENAI), Framing.SSE);
		reader.feed(bytes("data: {\"choices\":[{\"delta\":{\"content\":\"Hello wor"));
		reader.feed(bytes("ld\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"!!\"}}]}\n\ndata: {\"usa"));
		reader.finish();
		assertThat(reader.usage().hasUsage()).isFalse();
		assertThat(reader.usage().outputChars()).isEqualTo("Hello world!!".length());
		assertThat(reader.usage().streamEnded()).isFalse();
	}

	/**
	 * A stream without its usage chunk (OpenAI sends none unless asked) is charged what
	 * was streamed: a tool call's arguments are output the provider bills as text is.
	 */
	@Test
	void aStreamWithoutUsageCountsToolCallArgumentsAsOutput() {
		String arguments = "{\\\"city\\\":\\\"" + "Paris ".repeat(200) + "\\\"}";
		ResponseReader chat = new ResponseReader(Dialect.of(DialectId.OPENAI), Framing.SSE);
		chat.feed(
				bytes("data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,"
						+ "\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"weather\",\"arguments\":\"\"}}]}}]}\n\n"
						+ "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\""
						+ arguments + "\"}}]}}]}\n\n" + "data: {\"choices\":[{\"index\":0,\"delta\":{\"function_call\":"
						+ "{\"arguments\":\"{}\"}}}]}\n\n" + "data: [DONE]\n\n"));
		chat.finish();
		assertThat(chat.usage().hasUsage()).isFalse();
		assertThat(chat.usage().outputChars()).isEqualTo(("{\"city\":\"" + "Paris ".repeat(200) + "\"}{}").length());
		ResponseReader responses = new ResponseReader(Dialect.of(DialectId.OPENAI), Framing.SSE);
		responses
			.feed(bytes("data: {\"type\":\"response.function_call_arguments.delta\",\"delta\":\"{\\\"a\\\":1}\"}\n\n"
					+ "data: {\"type\":\"response.reasoning_summary_text.delta\",\"delta\":\"Thinking.\"}\n\n"
					+ "data: {\"type\":\"response.refusal.delta\",\"delta\":\"No.\"}\n\n"));
		responses.finish();
		assertThat(responses.usage().outputChars()).isEqualTo("{\"a\":1}Thinking.No.".length());
	}

	/**
	 * An answer that reaches llm-quota still compressed (a caller that asked for gzip
	 * itself, below a client that decompresses nothing) cannot be read: its reservation
	 * stands, where a stream read as text without usage was charged no output at all. One
	 * its HTTP client already decompressed, keeping the header, is read as usual.
	 */
	@Test
	void anAnswerStillCompressedIsNotReadAndKeepsItsReservation() throws java.io.IOException {
		String stream = "data: {\"choices\":[{\"delta\":{\"content\":\"Hello\"}}]}\n\n"
				+ "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":500}}\n\ndata: [DONE]\n\n";
		java.io.ByteArrayOutputStream zipped = new java.io.ByteArrayOutputStream();
		try (java.util.zip.GZIPOutputStream gzip = new java.util.zip.GZIPOutputStream(zipped)) {
			gzip.write(stream.getBytes(StandardCharsets.UTF_8));
		}
		ResponseReader compressed = new ResponseReader(Dialect.of(DialectId.OPENAI), Framing.SSE);
		compressed.encoded("gzip");
		compressed.feed(ByteBuffer.wrap(zipped.toByteArray()));
		compressed.finish();
		assertThat(compressed.usage().hasUsage()).isFalse();
		assertThat(compressed.partUnread()).as("the reservation stands").isTrue();
		for (String encoding : new String[] { "br", "zstd", "deflate" }) {
			ResponseReader other = new ResponseReader(Dialect.of(DialectId.OPENAI), Framing.SSE);
			other.encoded(encoding);
			other.feed(ByteBuffer.wrap(new byte[] { 0x1b, 0x3f, 0x00, 0x21 }));
			other.finish();
			assertThat(other.partUnread()).as(encoding).isTrue();
		}
		ResponseReader decompressed = new ResponseReader(Dialect.of(DialectId.OPENAI), Framing.SSE);
		decompressed.encoded("gzip");
		decompressed.feed(bytes(stream));
		decompressed.finish();
		assertThat(decompressed.usage().usage(999)).isEqualTo(new Usage(12, 0, 500));
		ResponseReader identity = new ResponseReader(Dialect.of(DialectId.OPENAI), Framing.SSE);
		identity.encoded("identity");
		identity.feed(bytes(stream));
		identity.finish();
		assertThat(identity.usage().usage(999)).isEqualTo(new Usage(12, 0, 500));
	}

	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "openai-stream-usage.json", "anthropic-stream-usage.json",
			"openai-responses-stream-usage.json" })
	void aStreamSaysItEndedWithItsLastEventAndNotBefore(String name) {
		RecordedFixture fixture = RecordedFixture.load(name);
		DialectId dialect = dialectOf(fixture);
		assertThat(reader(fixture, dialect, true).usage().streamEnded()).isTrue();
		String body = fixture.body();
		String last = body.substring(0, body.stripTrailing().lastIndexOf('\n') + 1);
		Dialect read = Dialect.of(dialect);
		ResponseReader cut = new ResponseReader(read, read.framing(true));
		cut.feed(bytes(last));
		assertThat(cut.usage().streamEnded()).as("all but the last line").isFalse();
	}

	/**
	 * A JSON answer whose last byte has passed is answered in full, though its reader
	 * stops there without reading the connection's end (Jackson, as the SDKs read it,
	 * over a body of no declared length: chunked, or gzip the client decompressed): a
	 * close then charges its usage, not its whole reservation.
	 */
	@Test
	void aJsonAnswerEndsWithItsLastByte() {
		ResponseReader reader = new ResponseReader(Dialect.of(DialectId.OPENAI), Framing.JSON);
		reader.feed(bytes("{\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":5}"));
		assertThat(reader.usage().streamEnded()).as("before its last byte").isFalse();
		reader.feed(bytes("}\n"));
		assertThat(reader.usage().streamEnded()).as("after it").isTrue();
	}

	@Test
	void aJsonAnswerIsReadForItsUsageWhereverItStandsAndItsTextIsSkipped() {
		String text = "word ".repeat(20_000);
		ResponseReader before = read(DialectId.OPENAI, Framing.JSON,
				"{\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3},\"choices\":[{\"message\":"
						+ "{\"content\":\"" + text + "\",\"extra\":[1,{\"a\":[]}]}}],\"id\":\"x\"}");
		assertThat(before.usage().usage(-1)).isEqualTo(new Usage(12, 0, 3));
		ResponseReader after = read(DialectId.ANTHROPIC, Framing.JSON, "{\"content\":[{\"type\":\"text\",\"text\":\""
				+ text + "\"}]," + "\"usage\":{\"input_tokens\":7,\"output_tokens\":2}}");
		assertThat(after.usage().usage(-1)).isEqualTo(new Usage(7, 0, 2));
	}

	@Test
	void aJsonAnswerSplitAnywhereReadsTheSameAndTwoDocumentsKeepTheReservation() {
		String answer = "{\"id\":\"x\",\"choices\":[{\"message\":{\"content\":\"caf\u00e9 [{}]\",\"n\":[1,2.5,null]}}],"
				+ "\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3,\"details\":{\"cached\":[true]}}}";
		byte[] utf8 = answer.getBytes(StandardCharsets.UTF_8);
		ResponseReader reader = new ResponseReader(Dialect.of(DialectId.OPENAI), Framing.JSON);
		for (byte one : utf8) {
			reader.feed(ByteBuffer.wrap(new byte[] { one }));
		}
		reader.finish();
		assertThat(reader.usage().usage(0)).isEqualTo(new Usage(12, 0, 3));
		ResponseReader twice = read(DialectId.OPENAI, Framing.JSON, answer + " " + answer);
		assertThat(twice.usage().hasUsage()).as("not one JSON document: the reservation stands").isFalse();
	}

	@Test
	void aJsonAnswerBrokenInItsTextKeepsTheReservation() {
		ResponseReader reader = new ResponseReader(Dialect.of(DialectId.OPENAI), Framing.JSON);
		reader.feed(bytes("{\"choices\":[{\"message\":{\"content\":\"cut here"));
		reader.feed(bytes("}],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3}}"));
		reader.finish();
		assertThat(reader.usage().hasUsage()).as("unreadable: nothing reported, the reservation stands").isFalse();
	}

	@Test
	void ollamaNdjsonStreamReportsCountsOnItsLastLine() {
		ResponseReader reader = new ResponseReader(Dialect.of(DialectId.OLLAMA), Framing.NDJSON);
		reader.feed(bytes("{\"message\":{\"content\":\"Hi\"},\"done\":false}\n{\"message\":{\"content\":\"\"},"));
		reader.feed(bytes("\"done\":true,\"prompt_eval_count\":26,\"eval_count\":259}\n"));
		reader.finish();
		assertThat(reader.usage().usage(0)).isEqualTo(new Usage(26, 0, 259));
	}

	/**
	 * Tokens written to Anthropic's prompt cache are part of the input and are kept
	 * apart: they are billed above the input price.
	 */
	@Test
	void anthropicCacheWritesAreReadApartFromTheRestOfTheInput() {
		ResponseReader reader = read(DialectId.ANTHROPIC, Framing.JSON,
				"{\"type\":\"message\",\"usage\":{\"input_tokens\":100,\"cache_creation_input_tokens\":10000,"
						+ "\"cache_read_input_tokens\":500,\"output_tokens\":7}}");
		assertThat(reader.usage().usage(0)).isEqualTo(new Usage(10_600, 500, 7, 10_000));
	}

	@Test
	void bedrockInvokeModelWithAnAnthropicBodyReadsItsSnakeCaseUsage() {
		ResponseReader reader = read(DialectId.BEDROCK, Framing.JSON,
				"{\"type\":\"message\",\"usage\":{\"input_tokens\":14,\"cache_read_input_tokens\":0,"
						+ "\"output_tokens\":36}}");
		assertThat(reader.usage().usage(0)).isEqualTo(new Usage(14, 0, 36));
	}

	@Test
	void geminiStreamSentAsOneJsonArrayIsReadToItsLastUsage() {
		ResponseReader reader = read(DialectId.GEMINI, Framing.JSON,
				"[{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hel\"}]}}]},"
						+ "{\"candidates\":[],\"usageMetadata\":{\"promptTokenCount\":3,\"candidatesTokenCount\":2}}]");
		assertThat(reader.usage().usage(0)).isEqualTo(new Usage(3, 0, 2));
	}

	@Test
	void numbersTooLargeForALongAreLeftOutNotThrown() {
		ResponseReader reader = read(DialectId.OPENAI, Framing.JSON,
				"{\"usage\":{\"prompt_tokens\":1e30,\"completion_tokens\":1e30}}");
		assertThat(reader.usage().hasUsage()).isFalse();
		assertThat(Dialect.of(DialectId.OPENAI)
			.outputCeiling(tools.jackson.databind.json.JsonMapper.shared().readTree("{\"max_tokens\":1e30}"))).isNull();
	}

	/** A whole answer read in one piece. */
	private static ResponseReader read(DialectId dialect, Framing framing, String body) {
		ResponseReader reader = new ResponseReader(Dialect.of(dialect), framing);
		reader.feed(bytes(body));
		reader.finish();
		return reader;
	}

	private static ByteBuffer bytes(String text) {
		return ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
	}

	private static ServerLimit limit(Long limit, Long remaining, Instant reset) {
		return new ServerLimit(null, limit, remaining, reset);
	}

	/** The reports by dimension, with the dimension itself left out for comparison. */
	private static Map<Dimension, ServerLimit> limits(RecordedFixture fixture, DialectId dialect) {
		Instant date = Durations.httpDate(fixture.headers().get("date"));
		Instant now = (date != null) ? date : Instant.EPOCH;
		return Dialect.of(dialect)
			.rateLimits((name) -> fixture.headers().get(name), now)
			.stream()
			.collect(Collectors.toMap(ServerLimit::dimension,
					(report) -> new ServerLimit(null, report.limit(), report.remaining(), report.reset())));
	}

	private static Usage usage(RecordedFixture fixture, DialectId dialect, boolean stream) {
		return reader(fixture, dialect, stream).usage().usage(-1);
	}

	private static ResponseReader reader(RecordedFixture fixture, DialectId dialect, boolean stream) {
		Dialect reader = Dialect.of(dialect);
		ResponseReader response = new ResponseReader(reader, reader.framing(stream));
		byte[] body = fixture.body().getBytes(StandardCharsets.UTF_8);
		// in two pieces, split mid-line, as a network would deliver it
		int half = body.length / 2;
		response.feed(ByteBuffer.wrap(body, 0, half));
		response.feed(ByteBuffer.wrap(body, half, body.length - half));
		response.finish();
		return response;
	}

	private static DialectId dialectOf(RecordedFixture fixture) {
		return switch (fixture.provider()) {
			case "openai" -> DialectId.OPENAI;
			case "azure", "azure-openai" -> DialectId.AZURE_OPENAI;
			case "anthropic" -> DialectId.ANTHROPIC;
			case "bedrock", "aws-bedrock" -> DialectId.BEDROCK;
			default -> DialectId.GEMINI;
		};
	}

}
