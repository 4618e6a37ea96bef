package dev.llmquota.provider;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;

import dev.llmquota.core.Usage;
import org.junit.jupiter.api.Test;
import software.amazon.eventstream.HeaderValue;
import software.amazon.eventstream.Message;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Bedrock's streams are AWS binary event streams; their usage is read from the messages
 * AWS's own codec writes, however the bytes are split, and a stream that cannot be read
 * whole reports no usage, so its reservation stands.
 */
class BedrockStreamReadingTests {

	private static final Dialect BEDROCK = Dialect.of(DialectId.BEDROCK);

	private static byte[] event(String type, String json) {
		Map<String, HeaderValue> headers = new LinkedHashMap<>();
		headers.put(":event-type", HeaderValue.fromString(type));
		headers.put(":content-type", HeaderValue.fromString("application/json"));
		headers.put(":message-type", HeaderValue.fromString("event"));
		ByteBuffer encoded = new Message(headers, json.getBytes(StandardCharsets.UTF_8)).toByteBuffer();
		byte[] bytes = new byte[encoded.remaining()];
		encoded.get(bytes);
		return bytes;
	}

	private static byte[] converseStream() {
		ByteArrayOutputStream stream = new ByteArrayOutputStream();
		stream.writeBytes(event("messageStart", "{\"role\":\"assistant\"}"));
		stream.writeBytes(event("contentBlockDelta", "{\"contentBlockIndex\":0,\"delta\":{\"text\":\"Hello \"}}"));
		stream.writeBytes(event("contentBlockDelta", "{\"contentBlockIndex\":0,\"delta\":{\"text\":\"there\"}}"));
		stream.writeBytes(event("contentBlockStop", "{\"contentBlockIndex\":0}"));
		stream.writeBytes(event("messageStop", "{\"stopReason\":\"end_turn\"}"));
		stream.writeBytes(event("metadata",
				"{\"usage\":{\"inputTokens\":25,\"outputTokens\":2,\"totalTokens\":27},\"metrics\":{\"latencyMs\":300}}"));
		return stream.toByteArray();
	}

	private static Usage read(byte[] stream, Random random) {
		return reader(stream, random).usage().usage(999);
	}

	private static ResponseReader reader(byte[] stream, Random random) {
		ResponseReader reader = new ResponseReader(BEDROCK, BEDROCK.framing(true));
		int at = 0;
		while (at < stream.length) {
			int size = Math.min(stream.length - at, 1 + random.nextInt(40));
			reader.feed(ByteBuffer.wrap(stream, at, size));
			at += size;
		}
		reader.finish();
		return reader;
	}

	@Test
	void converseStreamUsageComesFromItsMetadataEventHoweverTheBytesAreSplit() {
		byte[] stream = converseStream();
		for (long seed = 0; seed < 50; seed++) {
			assertThat(read(stream, new Random(seed))).as("split with seed %d", seed).isEqualTo(new Usage(25, 0, 2));
		}
	}

	@Test
	void invokeModelWithResponseStreamUsageComesFromTheInvocationMetricsOfItsLastChunk() {
		ByteArrayOutputStream stream = new ByteArrayOutputStream();
		for (String chunk : new String[] {
				"{\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":16,\"output_tokens\":1}}}",
				"{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}",
				"{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":17}}",
				"{\"type\":\"message_stop\",\"amazon-bedrock-invocationMetrics\":{\"inputTokenCount\":16,"
						+ "\"outputTokenCount\":17,\"invocationLatency\":4164,\"firstByteLatency\":4016}}" }) {
			stream.writeBytes(event("chunk", "{\"bytes\":\""
					+ Base64.getEncoder().encodeToString(chunk.getBytes(StandardCharsets.UTF_8)) + "\"}"));
		}
		assertThat(read(stream.toByteArray(), new Random(7))).isEqualTo(new Usage(16, 0, 17));
		assertThat(reader(stream.toByteArray(), new Random(7)).usage().streamEnded()).isTrue();
	}

	/**
	 * Bedrock's invocation metrics count the input outside the prompt cache alone
	 * ({@code inputTokenCount}), its cache reads and writes beside it: the usage is their
	 * sum, as the stream's own first event says.
	 */
	@Test
	void invokeModelWithResponseStreamKeepsThePromptCachesTokens() {
		ByteArrayOutputStream stream = new ByteArrayOutputStream();
		for (String chunk : new String[] { "{\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":20,"
				+ "\"cache_creation_input_tokens\":3000,\"cache_read_input_tokens\":5000,\"output_tokens\":1}}}",
				"{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}",
				"{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":17}}",
				"{\"type\":\"message_stop\",\"amazon-bedrock-invocationMetrics\":{\"inputTokenCount\":20,"
						+ "\"outputTokenCount\":17,\"invocationLatency\":4164,\"firstByteLatency\":4016,"
						+ "\"cacheReadInputTokenCount\":5000,\"cacheWriteInputTokenCount\":3000}}" }) {
			stream.writeBytes(event("chunk", "{\"bytes\":\""
					+ Base64.getEncoder().encodeToString(chunk.getBytes(StandardCharsets.UTF_8)) + "\"}"));
		}
		Usage usage = read(stream.toByteArray(), new Random(3));
		assertThat(usage).isEqualTo(new Usage(8020, 5000, 17, 3000));
		assertThat(usage.billedInputTokens(false)).isEqualTo(3020);
	}

	/**
	 * Nova's own bodies (InvokeModel) name the prompt cache's counts as the invocation
	 * metrics do, not as Converse does.
	 */
	@Test
	void novasInvokeModelBodyKeepsThePromptCachesTokens() {
		ResponseReader reader = new ResponseReader(BEDROCK, Framing.JSON);
		reader
			.feed(ByteBuffer.wrap(("{\"output\":{\"message\":{\"role\":\"assistant\",\"content\":[{\"text\":\"Hi\"}]}},"
					+ "\"stopReason\":\"end_turn\",\"usage\":{\"inputTokens\":20,\"outputTokens\":17,"
					+ "\"totalTokens\":8037,\"cacheReadInputTokenCount\":5000,\"cacheWriteInputTokenCount\":3000}}")
				.getBytes(StandardCharsets.UTF_8)));
		reader.finish();
		assertThat(reader.usage().usage(999)).isEqualTo(new Usage(8020, 5000, 17, 3000));
	}

	@Test
	void aStreamCutBeforeItsMetadataReportsNoUsage() {
		byte[] stream = converseStream();
		byte[] cut = java.util.Arrays.copyOf(stream, stream.length - 20);
		assertThat(read(cut, new Random(1))).isNull();
		assertThat(reader(cut, new Random(1)).usage().streamEnded()).as("a reader stopping here keeps the reservation")
			.isFalse();
		assertThat(reader(stream, new Random(1)).usage().streamEnded()).as("the metadata event is the last").isTrue();
	}

	@Test
	void aStreamWhoseChecksumDoesNotMatchIsNotTrusted() {
		byte[] stream = converseStream();
		stream[stream.length - 10] ^= 0x5A;
		assertThat(read(stream, new Random(2))).isNull();
	}

	@Test
	void garbageIsNotReadAsAStream() {
		byte[] garbage = new byte[500];
		new Random(3).nextBytes(garbage);
		assertThat(read(garbage, new Random(3))).isNull();
	}

	@Test
	void anExceptionInTheStreamIsNotUsage() {
		Map<String, HeaderValue> headers = new LinkedHashMap<>();
		headers.put(":exception-type", HeaderValue.fromString("throttlingException"));
		headers.put(":content-type", HeaderValue.fromString("application/json"));
		headers.put(":message-type", HeaderValue.fromString("exception"));
		ByteBuffer exception = new Message(headers,
				"{\"message\":\"Too many tokens, please wait before trying again.\"}".getBytes(StandardCharsets.UTF_8))
			.toByteBuffer();
		ResponseReader reader = new ResponseReader(BEDROCK, Framing.EVENT_STREAM);
		reader.feed(ByteBuffer.wrap(event("messageStart", "{\"role\":\"assistant\"}")));
		reader.feed(exception);
		reader.finish();
		assertThat(reader.usage().usage(10)).isNull();
	}

}
