package dev.llmquota.provider;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import dev.llmquota.core.Usage;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Streamed answers whose usage, or whose text where no usage comes, was read short: each
 * fed in 7-byte pieces, as a network delivers them.
 */
class StreamedUsageShapesTests {

	/**
	 * Each of a message_delta's input counts is optional: one that leaves out the cache
	 * counts of message_start (a partial delta) kept only its own and billed 10 tokens of
	 * 1,110.
	 */
	@Test
	void anAnthropicDeltaWithoutCacheCountsKeepsThoseOfMessageStart() {
		String body = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":10,"
				+ "\"cache_creation_input_tokens\":100,\"cache_read_input_tokens\":1000,\"output_tokens\":1}}}\n\n"
				+ "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},"
				+ "\"usage\":{\"input_tokens\":10,\"output_tokens\":15}}\n\n"
				+ "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
		ResponseReader reader = read(Dialect.of(DialectId.ANTHROPIC), Framing.SSE, body);
		assertThat(reader.usage().usage(99)).isEqualTo(new Usage(1110, 1000, 15, 100));
	}

	/** A proxy's delta of zeros: the counts only grow, so the stream's start stands. */
	@Test
	void anAnthropicDeltaOfZerosDoesNotWipeOutTheInputMessageStartReported() {
		String body = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":500,"
				+ "\"output_tokens\":1}}}\n\n"
				+ "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},"
				+ "\"usage\":{\"input_tokens\":0,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,"
				+ "\"output_tokens\":9}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
		ResponseReader reader = read(Dialect.of(DialectId.ANTHROPIC), Framing.SSE, body);
		assertThat(reader.usage().usage(99)).isEqualTo(new Usage(500, 0, 9, 0));
	}

	/** Reasoning streamed as text (DeepSeek, vLLM, Ollama, OpenRouter) is output too. */
	@Test
	void reasoningStreamedAsTextCountsAsOutput() {
		String body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"" + "think ".repeat(50)
				+ "\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"" + "more ".repeat(60)
				+ "\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Yes\"}}]}\n\ndata: [DONE]\n\n";
		ResponseReader reader = read(Dialect.of(DialectId.OPENAI), Framing.SSE, body);
		assertThat(reader.usage().outputChars()).isEqualTo(300 + 300 + 3);
	}

	/** A server that sends the same reasoning under both names: counted once. */
	@Test
	void reasoningSentUnderBothNamesCountsOnce() {
		String body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"" + "think ".repeat(50)
				+ "\",\"reasoning\":\"" + "think ".repeat(50) + "\"}}]}\n\ndata: [DONE]\n\n";
		ResponseReader reader = read(Dialect.of(DialectId.OPENAI), Framing.SSE, body);
		assertThat(reader.usage().outputChars()).isEqualTo(300);
	}

	/** The legacy Completions API streams its text in {@code choices[].text}. */
	@Test
	void aLegacyCompletionsStreamsTextCountsAsOutput() {
		String body = "data: {\"object\":\"text_completion\",\"choices\":[{\"text\":\"" + "lorem ".repeat(100)
				+ "\",\"index\":0,\"finish_reason\":null}]}\n\n"
				+ "data: {\"object\":\"text_completion\",\"choices\":[{\"text\":\"\",\"index\":0,\"finish_reason\":\"length\"}]}\n\n"
				+ "data: [DONE]\n\n";
		ResponseReader reader = read(Dialect.of(DialectId.OPENAI), Framing.SSE, body);
		assertThat(reader.usage().outputChars()).isEqualTo(600);
	}

	private static ResponseReader read(Dialect dialect, Framing framing, String body) {
		ResponseReader reader = new ResponseReader(dialect, framing);
		byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
		for (int i = 0; i < bytes.length; i += 7) {
			reader.feed(ByteBuffer.wrap(bytes, i, Math.min(7, bytes.length - i)));
		}
		reader.finish();
		return reader;
	}

}
