package dev.llmquota.test.simulator;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import dev.llmquota.test.junit.ProviderSimulatorExtension;
import dev.llmquota.test.simulator.RequestRecord.Outcome;
import dev.llmquota.test.simulator.clock.ManualSimClock;
import dev.llmquota.test.simulator.dialect.Json;
import dev.llmquota.test.simulator.quota.Dimension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.eventstream.Message;
import software.amazon.eventstream.MessageDecoder;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * Bedrock's ConverseStream, InvokeModel and InvokeModelWithResponseStream, with the
 * binary event streams read by AWS's own decoder.
 */
class BedrockStreamTests {

	private static final String CLAUDE = "us.anthropic.claude-sonnet-4-5-20250929-v1%3A0";

	private static final String NOVA = "amazon.nova-lite-v1%3A0";

	static final ManualSimClock clock = new ManualSimClock();

	@RegisterExtension
	static final ProviderSimulatorExtension extension = new ProviderSimulatorExtension(ProviderSimulator.builder()
		.clock(clock)
		.latency((latency) -> latency.fixedOutputTokens(20))
		.model("amazon.nova-lite-v1:0", (limits) -> limits.tokensPerMinute(10_000))
		.model("us.anthropic.claude-sonnet-4-5-20250929-v1:0", (limits) -> limits.tokensPerMinute(10_000)));

	@Test
	void streamsConverseAsEventStreamMessagesWithUsageInMetadata(ProviderSimulator simulator) {
		HttpResponse<byte[]> response = SimHttp.postBytes(simulator, "/model/" + NOVA + "/converse-stream",
				SimHttp.bedrock(100));
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.headers().firstValue("content-type")).hasValue("application/vnd.amazon.eventstream");
		List<Message> messages = decode(response.body());
		assertThat(messages).allSatisfy((message) -> {
			assertThat(message.getHeaders().get(":content-type").getString()).isEqualTo("application/json");
			assertThat(message.getHeaders().get(":message-type").getString()).isEqualTo("event");
		});
		List<String> types = messages.stream().map(BedrockStreamTests::eventType).toList();
		int deltas = types.size() - 4;
		assertThat(deltas).isPositive();
		assertThat(types.get(0)).isEqualTo("messageStart");
		assertThat(types.subList(1, 1 + deltas)).containsOnly("contentBlockDelta");
		assertThat(types.subList(1 + deltas, types.size())).containsExactly("contentBlockStop", "messageStop",
				"metadata");
		assertThat(payload(messages.get(0)).get("role").stringValue()).isEqualTo("assistant");
		StringBuilder text = new StringBuilder();
		for (Message delta : messages.subList(1, 1 + deltas)) {
			JsonNode event = payload(delta);
			assertThat(event.get("contentBlockIndex").asInt()).isZero();
			text.append(event.at("/delta/text").stringValue());
		}
		assertThat(text.toString()).isNotBlank();
		assertThat(payload(messages.get(1 + deltas)).get("contentBlockIndex").asInt()).isZero();
		assertThat(payload(messages.get(2 + deltas)).get("stopReason").stringValue()).isEqualTo("end_turn");
		JsonNode metadata = payload(messages.get(3 + deltas));
		await().atMost(Duration.ofSeconds(5)).until(() -> simulator.requestLog().size() == 1);
		RequestRecord record = simulator.requestLog().records().get(0);
		assertThat(record.stream()).isTrue();
		assertThat(record.api()).isEqualTo("converse-stream");
		assertThat(record.outcome()).isEqualTo(Outcome.COMPLETED);
		assertThat(metadata.at("/usage/inputTokens").asLong()).isEqualTo(record.inputTokens());
		assertThat(metadata.at("/usage/outputTokens").asLong()).isEqualTo(record.outputTokens()).isEqualTo(20);
		assertThat(metadata.at("/usage/totalTokens").asLong()).isEqualTo(record.inputTokens() + 20);
		assertThat(metadata.at("/metrics/latencyMs").isIntegralNumber()).isTrue();
		assertThat(simulator.remaining("amazon.nova-lite-v1:0", Dimension.TOKENS_PER_MINUTE))
			.isEqualTo(10_000 - record.inputTokens() - 20);
	}

	@Test
	void awsDecoderChecksBothCrcsOfEveryFrame(ProviderSimulator simulator) {
		byte[] stream = SimHttp.postBytes(simulator, "/model/" + NOVA + "/converse-stream", SimHttp.bedrock(100))
			.body();
		assertThat(decode(stream)).isNotEmpty();
		byte[] badPrelude = stream.clone();
		badPrelude[1] ^= 0x01;
		assertThatIllegalArgumentException().isThrownBy(() -> decode(badPrelude)).withMessageContaining("Prelude");
		byte[] badPayload = stream.clone();
		// the last payload byte of the first message, just before its message CRC
		badPayload[ByteBuffer.wrap(stream).getInt(0) - 5] ^= 0x01;
		assertThatIllegalArgumentException().isThrownBy(() -> decode(badPayload)).withMessageContaining("Message");
	}

	@Test
	void answersInvokeModelWithClaudesMessageAndTokenCountHeaders(ProviderSimulator simulator) {
		HttpResponse<String> response = SimHttp.post(simulator, "/model/" + CLAUDE + "/invoke",
				SimHttp.anthropicInvoke(100));
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.headers().firstValue("content-type")).hasValue("application/json");
		JsonNode body = SimHttp.json(response);
		assertThat(body.get("type").stringValue()).isEqualTo("message");
		assertThat(body.get("id").stringValue()).startsWith("msg_bdrk_");
		assertThat(body.get("role").stringValue()).isEqualTo("assistant");
		assertThat(body.at("/content/0/type").stringValue()).isEqualTo("text");
		assertThat(body.at("/content/0/text").stringValue()).isNotBlank();
		assertThat(body.get("stop_reason").stringValue()).isEqualTo("end_turn");
		await().atMost(Duration.ofSeconds(5)).until(() -> simulator.requestLog().size() == 1);
		RequestRecord record = simulator.requestLog().records().get(0);
		assertThat(record.api()).isEqualTo("invoke");
		assertThat(record.maxTokens()).isEqualTo(100);
		assertThat(body.at("/usage/input_tokens").asLong()).isEqualTo(record.inputTokens());
		assertThat(body.at("/usage/output_tokens").asLong()).isEqualTo(record.outputTokens()).isEqualTo(20);
		assertThat(response.headers().firstValue("x-amzn-bedrock-input-token-count"))
			.hasValue(Long.toString(record.inputTokens()));
		assertThat(response.headers().firstValue("x-amzn-bedrock-output-token-count")).hasValue("20");
		assertThat(response.headers().firstValue("x-amzn-bedrock-invocation-latency"))
			.hasValueSatisfying((latency) -> assertThat(latency).matches("\\d+"));
		assertThat(simulator.remaining("us.anthropic.claude-sonnet-4-5-20250929-v1:0", Dimension.TOKENS_PER_MINUTE))
			.isEqualTo(10_000 - record.inputTokens() - 20);
	}

	@Test
	void streamsInvokeModelAsChunksOfClaudesEventsWithInvocationMetrics(ProviderSimulator simulator) {
		HttpResponse<byte[]> response = SimHttp.postBytes(simulator,
				"/model/" + CLAUDE + "/invoke-with-response-stream", SimHttp.anthropicInvoke(100));
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.headers().firstValue("content-type")).hasValue("application/vnd.amazon.eventstream");
		List<Message> messages = decode(response.body());
		assertThat(messages).extracting(BedrockStreamTests::eventType).containsOnly("chunk");
		List<JsonNode> events = new ArrayList<>();
		for (Message message : messages) {
			String bytes = payload(message).get("bytes").stringValue();
			events.add(Json.MAPPER.readTree(Base64.getDecoder().decode(bytes)));
		}
		List<String> types = events.stream().map((event) -> event.get("type").stringValue()).toList();
		int deltas = types.size() - 5;
		assertThat(deltas).isPositive();
		assertThat(types.subList(0, 2)).containsExactly("message_start", "content_block_start");
		assertThat(types.subList(2, 2 + deltas)).containsOnly("content_block_delta");
		assertThat(types.subList(2 + deltas, types.size())).containsExactly("content_block_stop", "message_delta",
				"message_stop");
		assertThat(events.get(2).at("/delta/type").stringValue()).isEqualTo("text_delta");
		await().atMost(Duration.ofSeconds(5)).until(() -> simulator.requestLog().size() == 1);
		RequestRecord record = simulator.requestLog().records().get(0);
		assertThat(record.stream()).isTrue();
		assertThat(events.get(0).at("/message/usage/input_tokens").asLong()).isEqualTo(record.inputTokens());
		assertThat(events.get(3 + deltas).at("/usage/output_tokens").asLong()).isEqualTo(record.outputTokens())
			.isEqualTo(20);
		JsonNode metrics = events.get(4 + deltas).get("amazon-bedrock-invocationMetrics");
		assertThat(metrics.get("inputTokenCount").asLong()).isEqualTo(record.inputTokens());
		assertThat(metrics.get("outputTokenCount").asLong()).isEqualTo(20);
		assertThat(metrics.get("invocationLatency").isIntegralNumber()).isTrue();
		assertThat(metrics.get("firstByteLatency").isIntegralNumber()).isTrue();
	}

	@Test
	void dropsABinaryStreamAfterHalfItsFrames(ProviderSimulator simulator) {
		simulator.faults().next(Fault.DROP_MID_STREAM);
		SimHttp.Received received = SimHttp.receive(simulator, "/model/" + NOVA + "/converse-stream",
				SimHttp.bedrock(100));
		assertThat(received.status()).isEqualTo(200);
		assertThat(received.failure()).isInstanceOf(IOException.class);
		// 20 tokens in 10 deltas, after messageStart and before 3 closing events: 14
		// frames, 7 of which are sent
		List<Message> messages = decode(received.body());
		assertThat(messages).extracting(BedrockStreamTests::eventType)
			.containsExactly("messageStart", "contentBlockDelta", "contentBlockDelta", "contentBlockDelta",
					"contentBlockDelta", "contentBlockDelta", "contentBlockDelta");
		await().atMost(Duration.ofSeconds(5)).until(() -> simulator.requestLog().size() == 1);
		assertThat(simulator.requestLog().records().get(0).outcome()).isEqualTo(Outcome.DROPPED);
	}

	@Test
	void refusesAStreamBeforeItStartsWithThrottlingException(ProviderSimulator simulator) {
		assertThat(
				SimHttp.postBytes(simulator, "/model/" + NOVA + "/converse-stream", SimHttp.bedrock(100)).statusCode())
			.isEqualTo(200);
		// input and ceiling together ask for the whole minute's 10,000 tokens
		HttpResponse<String> refused = SimHttp.post(simulator, "/model/" + NOVA + "/converse-stream",
				SimHttp.bedrock(9_990));
		assertThat(refused.statusCode()).isEqualTo(429);
		assertThat(refused.headers().firstValue("x-amzn-ErrorType"))
			.hasValueSatisfying((type) -> assertThat(type).startsWith("ThrottlingException:"));
		assertThat(SimHttp.json(refused).get("message").stringValue())
			.isEqualTo("Too many tokens, please wait before trying again.");
	}

	private static List<Message> decode(byte[] bytes) {
		MessageDecoder decoder = new MessageDecoder();
		decoder.feed(bytes);
		return decoder.getDecodedMessages();
	}

	private static String eventType(Message message) {
		return message.getHeaders().get(":event-type").getString();
	}

	private static JsonNode payload(Message message) {
		return Json.MAPPER.readTree(new String(message.getPayload(), StandardCharsets.UTF_8));
	}

}
