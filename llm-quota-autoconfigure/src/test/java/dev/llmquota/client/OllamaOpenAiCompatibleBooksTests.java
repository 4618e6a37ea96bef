package dev.llmquota.client;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.Dimension;
import org.junit.jupiter.api.Test;

import org.springframework.http.MediaType;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Ollama serves OpenAI's Chat Completions under /v1 on its own port (Spring AI's OpenAI
 * model pointed at http://localhost:11434 is Ollama's documented set-up), so an
 * {@code ollama} entry sees OpenAI's requests, SSE streams and usage: its native reading
 * found no usage and no text in them, and charged such a stream nothing of its output.
 */
class OllamaOpenAiCompatibleBooksTests {

	private static final Duration PATIENCE = Duration.ofSeconds(10);

	@Test
	void anOpenAiStreamThroughAnOllamaEntryIsChargedTheUsageItReported() {
		String stream = "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
				+ "\"delta\":{\"role\":\"assistant\",\"content\":\"Hello\"},\"finish_reason\":null}]}\n\n"
				+ "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
				+ "\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":\"stop\"}]}\n\n"
				+ "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[],"
				+ "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":3500,\"total_tokens\":3505}}\n\n"
				+ "data: [DONE]\n\n";
		try (LoopbackServer server = new LoopbackServer(200, Map.of("content-type", "text/event-stream"), stream);
				GovernedApp app = GovernedApp.start("llm.quota.providers.p.base-url=" + server.baseUrl(),
						"llm.quota.providers.p.dialect=ollama", "llm.quota.headroom=1.0",
						"llm.quota.providers.p.burst-window=60s",
						"llm.quota.providers.p.models.m.tokens-per-minute=10000",
						"llm.quota.providers.p.models.m.tokens-per-day=1000000")) {
			app.webClient()
				.post()
				.uri(server.baseUrl() + "/v1/chat/completions")
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue(Map.of("model", "m", "max_tokens", 4_000, "stream", true, "stream_options",
						Map.of("include_usage", true), "messages", List.of(Map.of("role", "user", "content", "Hi"))))
				.retrieve()
				.bodyToMono(String.class)
				.block(PATIENCE);
			await().atMost(PATIENCE).until(() -> app.engine().inFlight(app.engine().pool("p", "m").account()) == 0);
			// a day's bucket barely refills: what is gone is what was charged
			assertThat(app.engine()
				.snapshot(app.engine().pool("p", "m"))
				.bucket(BucketSpec.Scope.POOL, Dimension.TOKENS_PER_DAY)
				.remaining()).as("the day is charged the 3,505 tokens the answer reported")
				.isEqualTo(1_000_000L - 3_505L);
		}
	}

}
