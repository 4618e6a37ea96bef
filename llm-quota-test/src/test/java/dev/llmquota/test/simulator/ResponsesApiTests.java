package dev.llmquota.test.simulator;

import java.io.InputStream;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.llmquota.test.junit.ProviderSimulatorExtension;
import dev.llmquota.test.simulator.RequestRecord.Outcome;
import dev.llmquota.test.simulator.clock.ManualSimClock;
import dev.llmquota.test.simulator.dialect.Json;
import dev.llmquota.test.simulator.dialect.Operation;
import dev.llmquota.test.simulator.quota.Dimension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * OpenAI's Responses API: the response object, its typed event stream, and a rate limit
 * that reaches a streamed call after HTTP 200 as {@code response.failed}.
 */
class ResponsesApiTests {

	private static final String PATH = "/v1/responses";

	static final ManualSimClock clock = new ManualSimClock();

	@RegisterExtension
	static final ProviderSimulatorExtension extension = new ProviderSimulatorExtension(ProviderSimulator.builder()
		.clock(clock)
		.latency((latency) -> latency.fixedOutputTokens(20))
		.model("gpt-5.1", (limits) -> limits.requestsPerMinute(500).tokensPerMinute(30_000)));

	@Test
	void answersWithACompletedResponseWhoseUsageIsWhatTheBooksMetered(ProviderSimulator simulator) {
		HttpResponse<String> response = SimHttp.post(simulator, PATH, SimHttp.responses("gpt-5.1", 100, false));
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.headers().firstValue("content-type")).hasValue("application/json");
		JsonNode body = SimHttp.json(response);
		assertThat(body.get("id").stringValue()).startsWith("resp_");
		assertThat(body.get("object").stringValue()).isEqualTo("response");
		assertThat(body.get("status").stringValue()).isEqualTo("completed");
		assertThat(body.get("model").stringValue()).isEqualTo("gpt-5.1");
		assertThat(body.get("output")).hasSize(1);
		JsonNode message = body.at("/output/0");
		assertThat(message.get("type").stringValue()).isEqualTo("message");
		assertThat(message.get("id").stringValue()).startsWith("msg_");
		assertThat(message.get("role").stringValue()).isEqualTo("assistant");
		JsonNode text = message.at("/content/0");
		assertThat(text.get("type").stringValue()).isEqualTo("output_text");
		assertThat(text.get("text").stringValue()).isNotBlank();
		assertThat(text.get("annotations").isArray()).isTrue();
		await().atMost(Duration.ofSeconds(5)).until(() -> simulator.requestLog().size() == 1);
		RequestRecord record = simulator.requestLog().records().get(0);
		assertThat(record.operation()).isEqualTo(Operation.RESPONSES);
		assertThat(record.api()).isEqualTo("responses");
		assertThat(record.maxTokens()).isEqualTo(100);
		JsonNode usage = body.get("usage");
		assertThat(usage.get("input_tokens").asLong()).isEqualTo(record.inputTokens());
		assertThat(usage.get("output_tokens").asLong()).isEqualTo(record.outputTokens()).isEqualTo(20);
		assertThat(usage.get("total_tokens").asLong()).isEqualTo(record.inputTokens() + 20);
		assertThat(usage.at("/input_tokens_details/cached_tokens").asLong()).isZero();
		assertThat(usage.at("/output_tokens_details/reasoning_tokens").asLong()).isZero();
	}

	@Test
	void reservesMaxOutputTokensAtAdmissionLikeMaxTokens(ProviderSimulator simulator) {
		HttpResponse<String> response = SimHttp.post(simulator, PATH, SimHttp.responses("gpt-5.1", 1000, false));
		long input = SimHttp.json(response).at("/usage/input_tokens").asLong();
		assertThat(response.headers().firstValue("x-ratelimit-remaining-tokens"))
			.hasValue(Long.toString(30_000 - input - 1000));
		assertThat(response.headers().firstValue("x-ratelimit-remaining-requests")).hasValue("499");
		await().atMost(Duration.ofSeconds(5)).until(() -> simulator.requestLog().size() == 1);
		// the unused part of the reservation comes back at completion
		assertThat(simulator.remaining("gpt-5.1", Dimension.TOKENS_PER_MINUTE)).isEqualTo(30_000 - input - 20);
	}

	@Test
	void countsStringInputAndMessageItemsAlike(ProviderSimulator simulator) {
		String text = "{\"model\":\"gpt-5.1\",\"input\":\"Say hello to the simulator\"}";
		String items = "{\"model\":\"gpt-5.1\",\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_text\","
				+ "\"text\":\"Say hello to the simulator\"}]}]}";
		String instructed = "{\"model\":\"gpt-5.1\",\"instructions\":\"Be brief.\","
				+ "\"input\":[{\"role\":\"user\",\"content\":\"Say hello to the simulator\"}]}";
		long fromText = SimHttp.json(SimHttp.post(simulator, PATH, text)).at("/usage/input_tokens").asLong();
		long fromItems = SimHttp.json(SimHttp.post(simulator, PATH, items)).at("/usage/input_tokens").asLong();
		long withInstructions = SimHttp.json(SimHttp.post(simulator, PATH, instructed))
			.at("/usage/input_tokens")
			.asLong();
		assertThat(fromItems).isEqualTo(fromText);
		assertThat(withInstructions).isGreaterThan(fromText);
	}

	@Test
	void streamsTypedEventsInSequenceWithUsageOnCompleted(ProviderSimulator simulator) {
		HttpResponse<String> response = SimHttp.post(simulator, PATH, SimHttp.responses("gpt-5.1", 100, true));
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.headers().firstValue("content-type")).hasValue("text/event-stream; charset=utf-8");
		assertThat(response.body()).doesNotContain("[DONE]");
		List<JsonNode> events = events(response.body());
		List<String> types = events.stream().map((event) -> event.get("type").stringValue()).toList();
		int deltas = types.size() - 8;
		assertThat(deltas).isPositive();
		List<String> expected = new ArrayList<>(List.of("response.created", "response.in_progress",
				"response.output_item.added", "response.content_part.added"));
		for (int i = 0; i < deltas; i++) {
			expected.add("response.output_text.delta");
		}
		expected.addAll(List.of("response.output_text.done", "response.content_part.done", "response.output_item.done",
				"response.completed"));
		assertThat(types).isEqualTo(expected);
		for (int i = 0; i < events.size(); i++) {
			assertThat(events.get(i).get("sequence_number").asInt()).isEqualTo(i);
		}
		StringBuilder text = new StringBuilder();
		events.stream()
			.filter((event) -> event.get("type").stringValue().equals("response.output_text.delta"))
			.forEach((event) -> text.append(event.get("delta").stringValue()));
		assertThat(events.get(4 + deltas).get("text").stringValue()).isEqualTo(text.toString());
		String itemId = events.get(2).at("/item/id").stringValue();
		assertThat(events.subList(3, 6 + deltas))
			.allSatisfy((event) -> assertThat(event.get("item_id").stringValue()).isEqualTo(itemId));
		JsonNode completed = events.get(events.size() - 1).get("response");
		assertThat(completed.get("status").stringValue()).isEqualTo("completed");
		assertThat(completed.get("id").stringValue()).isEqualTo(events.get(0).at("/response/id").stringValue());
		assertThat(completed.at("/output/0/content/0/text").stringValue()).isEqualTo(text.toString());
		await().atMost(Duration.ofSeconds(5)).until(() -> simulator.requestLog().size() == 1);
		RequestRecord record = simulator.requestLog().records().get(0);
		assertThat(record.stream()).isTrue();
		assertThat(record.outcome()).isEqualTo(Outcome.COMPLETED);
		assertThat(completed.at("/usage/input_tokens").asLong()).isEqualTo(record.inputTokens());
		assertThat(completed.at("/usage/output_tokens").asLong()).isEqualTo(record.outputTokens()).isEqualTo(20);
		assertThat(completed.at("/usage/total_tokens").asLong()).isEqualTo(record.inputTokens() + 20);
	}

	@Test
	void refusesAStreamedCallInsideTheStreamWithTheMessageOfIts429Twin() {
		ManualSimClock slowClock = new ManualSimClock();
		try (ProviderSimulator simulator = ProviderSimulator.builder()
			.clock(slowClock)
			.latency((latency) -> latency.timeToFirstToken(Duration.ofSeconds(1)).fixedOutputTokens(20))
			.model("gpt-5.1", (limits) -> limits.tokensPerMinute(30_000))
			.start()) {
			// a call in flight holds its reservation of 22,000 output tokens
			HttpResponse<InputStream> inFlight = SimHttp
				.open(simulator, PATH, SimHttp.responses("gpt-5.1", 22_000, true))
				.join();
			HttpResponse<String> streamed = SimHttp.post(simulator, PATH, SimHttp.responses("gpt-5.1", 12_000, true));
			assertThat(streamed.statusCode()).isEqualTo(200);
			assertThat(streamed.headers().firstValue("content-type")).hasValue("text/event-stream; charset=utf-8");
			List<JsonNode> events = events(streamed.body());
			assertThat(events).extracting((event) -> event.get("type").stringValue())
				.containsExactly("response.created", "response.failed");
			assertThat(events).extracting((event) -> event.get("sequence_number").asInt()).containsExactly(0, 1);
			JsonNode failed = events.get(1).get("response");
			assertThat(failed.get("status").stringValue()).isEqualTo("failed");
			assertThat(failed.get("id").stringValue()).isEqualTo(events.get(0).at("/response/id").stringValue());
			assertThat(failed.at("/error/code").stringValue()).isEqualTo("rate_limit_exceeded");
			String message = failed.at("/error/message").stringValue();
			assertThat(message)
				.matches("Rate limit reached for gpt-5.1 in organization \\S+ on tokens per min \\(TPM\\): "
						+ "Limit 30000, Used 220\\d\\d, Requested 120\\d\\d\\. Please try again in \\d+(\\.\\d+)?s\\. .*");
			HttpResponse<String> twin = SimHttp.post(simulator, PATH, SimHttp.responses("gpt-5.1", 12_000, false));
			assertThat(twin.statusCode()).isEqualTo(429);
			assertThat(SimHttp.json(twin).at("/error/code").stringValue()).isEqualTo("rate_limit_exceeded");
			assertThat(SimHttp.json(twin).at("/error/message").stringValue()).isEqualTo(message);
			await().atMost(Duration.ofSeconds(5)).until(() -> simulator.requestLog().size() == 2);
			List<RequestRecord> refused = simulator.requestLog().refused();
			assertThat(refused).extracting(RequestRecord::stream).containsExactly(true, false);
			assertThat(refused).extracting(RequestRecord::status).containsExactly(200, 429);
			assertThat(refused).extracting(RequestRecord::outcome).containsOnly(Outcome.REFUSED);
			assertThat(refused).extracting(RequestRecord::dimension).containsOnly(Dimension.TOKENS_PER_MINUTE);
			slowClock.advance(Duration.ofSeconds(1));
			assertThat(SimHttp.readAll(inFlight)).contains("event: response.completed");
		}
	}

	private static List<JsonNode> events(String sse) {
		List<JsonNode> events = new ArrayList<>();
		for (String frame : sse.split("\n\n")) {
			List<String> lines = frame.lines().toList();
			assertThat(lines).hasSize(2);
			assertThat(lines.get(0)).startsWith("event: ");
			assertThat(lines.get(1)).startsWith("data: ");
			JsonNode data = Json.MAPPER.readTree(lines.get(1).substring(6));
			assertThat(data.get("type").stringValue()).isEqualTo(lines.get(0).substring(7));
			events.add(data);
		}
		return events;
	}

}
