package dev.llmquota.sdk;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import com.anthropic.client.AnthropicClient;
import com.anthropic.client.okhttp.AnthropicOkHttpClient;
import com.anthropic.models.messages.Message;
import com.anthropic.models.messages.MessageCreateParams;
import dev.llmquota.LlmQuota;
import dev.llmquota.client.anthropic.LlmQuotaAnthropicInterceptor;
import dev.llmquota.core.Priority;
import dev.llmquota.it.SimulatedApplication;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The Anthropic SDK's asynchronous services call the interceptor on a pool thread of
 * theirs, where no {@link LlmQuota#with} scope reaches: what a client's calls carry is
 * bound to its interceptor instead, and with two entries of {@code dialect: anthropic}
 * that is what makes them governed at all.
 */
class AnthropicSdkBoundAttributesTests {

	private static final Duration PATIENCE = SimulatedApplication.PATIENCE;

	/** One application for the class: each test reads what its own calls added. */
	private static SimulatedApplication app;

	@BeforeAll
	static void start() {
		app = SimulatedApplication.start((sim) -> {
		}, (base) -> {
			List<String> all = new ArrayList<>(SimulatedApplication.openAiAndAnthropic(base));
			all.addAll(List.of("llm.quota.providers.second.base-url=" + base + "/second",
					"llm.quota.providers.second.dialect=anthropic"));
			return all;
		});
	}

	@AfterAll
	static void stop() {
		app.close();
	}

	private static long admitted(Priority priority) {
		return app.pool("anthropic", "claude-sonnet-4-5").stats().waits(priority).admitted();
	}

	private static AnthropicClient client(LlmQuotaAnthropicInterceptor interceptor) {
		return AnthropicOkHttpClient.builder()
			.baseUrl(app.simulator().baseUrl())
			.apiKey("test-key")
			.addInterceptor(interceptor)
			.build();
	}

	private static MessageCreateParams message() {
		return MessageCreateParams.builder().model("claude-sonnet-4-5").maxTokens(20).addUserMessage("Hello.").build();
	}

	@Test
	void anAsyncCallCarriesWhatItsInterceptorBinds() {
		long before = admitted(Priority.BATCH);
		LlmQuotaAnthropicInterceptor interceptor = app.context()
			.getBean(LlmQuotaAnthropicInterceptor.class)
			.with(LlmQuota.PROVIDER, "anthropic")
			.with(LlmQuota.PRIORITY, Priority.BATCH);
		CompletableFuture<Message> call = client(interceptor).async().messages().create(message());
		assertThat(call).succeedsWithin(PATIENCE);
		assertThat(admitted(Priority.BATCH) - before).as("calls admitted as BATCH in pool anthropic").isOne();
	}

	@Test
	void aScopeAroundABlockingCallWinsOverWhatTheInterceptorBinds() {
		long before = admitted(Priority.INTERACTIVE);
		LlmQuotaAnthropicInterceptor interceptor = app.context()
			.getBean(LlmQuotaAnthropicInterceptor.class)
			.with(LlmQuota.PROVIDER, "anthropic")
			.with(LlmQuota.PRIORITY, Priority.BATCH);
		AnthropicClient client = client(interceptor);
		LlmQuota.with(LlmQuota.PRIORITY, Priority.INTERACTIVE).get(() -> client.messages().create(message()));
		assertThat(admitted(Priority.INTERACTIVE) - before).as("calls admitted as INTERACTIVE in pool anthropic")
			.isOne();
	}

	@Test
	void bindingAnEntryThatDoesNotExistFailsAtOnceNamingTheEntries() {
		assertThatIllegalArgumentException()
			.isThrownBy(
					() -> app.context().getBean(LlmQuotaAnthropicInterceptor.class).with(LlmQuota.PROVIDER, "antropic"))
			.withMessageContaining("'antropic'")
			.withMessageContaining("second");
	}

}
