package dev.llmquota.client.langchain4j;

import java.time.Duration;

import dev.langchain4j.http.client.HttpClient;
import dev.langchain4j.http.client.HttpClientBuilder;
import dev.llmquota.client.LlmQuotaCalls;

/**
 * LangChain4j's HTTP client, governed: pass this bean to a model's builder and its calls
 * are admitted, retried and accounted by llm-quota.
 *
 * <pre class="code">
 * OpenAiChatModel model = OpenAiChatModel.builder()
 *     .httpClientBuilder(llmQuotaHttpClientBuilder)
 *     .apiKey(key).modelName("gpt-4o")
 *     .build();
 * </pre>
 *
 * It is a bean to pass in, not a {@code ServiceLoader} factory: LangChain4j refuses to
 * choose when two factories are on the class path. The builder is immutable: each timeout
 * returns a new builder, so one bean serves every model.
 */
public final class LlmQuotaHttpClientBuilder implements HttpClientBuilder {

	private final LlmQuotaCalls calls;

	private final Duration connectTimeout;

	private final Duration readTimeout;

	/**
	 * Creates the builder.
	 * @param calls the call support
	 */
	public LlmQuotaHttpClientBuilder(LlmQuotaCalls calls) {
		this(calls, null, null);
	}

	private LlmQuotaHttpClientBuilder(LlmQuotaCalls calls, Duration connectTimeout, Duration readTimeout) {
		this.calls = calls;
		this.connectTimeout = connectTimeout;
		this.readTimeout = readTimeout;
	}

	@Override
	public Duration connectTimeout() {
		return this.connectTimeout;
	}

	@Override
	public LlmQuotaHttpClientBuilder connectTimeout(Duration timeout) {
		return new LlmQuotaHttpClientBuilder(this.calls, timeout, this.readTimeout);
	}

	@Override
	public Duration readTimeout() {
		return this.readTimeout;
	}

	@Override
	public LlmQuotaHttpClientBuilder readTimeout(Duration timeout) {
		return new LlmQuotaHttpClientBuilder(this.calls, this.connectTimeout, timeout);
	}

	@Override
	public HttpClient build() {
		java.net.http.HttpClient.Builder client = java.net.http.HttpClient.newBuilder();
		if (this.connectTimeout != null) {
			client.connectTimeout(this.connectTimeout);
		}
		return new LlmQuotaHttpClient(this.calls, client.build(), this.readTimeout);
	}

}
