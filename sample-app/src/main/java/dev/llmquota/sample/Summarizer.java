package dev.llmquota.sample;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import dev.llmquota.LlmQuota;
import dev.llmquota.autoconfigure.LlmQuotaProperties;
import dev.llmquota.core.Priority;
import dev.llmquota.provider.Waits;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;

/**
 * Asks the provider for summaries through OpenAI's Chat Completions API. The governed
 * client is built from Spring Boot's {@code WebClient.Builder}, so llm-quota admits every
 * call; the ungoverned one, for the contrast run, is a plain {@code WebClient} that
 * retries rate limits after the provider's wait, as the official SDKs do.
 */
@Component
public class Summarizer {

	private static final String INSTRUCTION = "Summarise the document in three sentences.";

	private final WebClient governed;

	private final WebClient ungoverned;

	private final DemoProperties properties;

	private final String endpoint;

	private final String direct;

	/** Rate-limit answers the service's clients received, retried ones included. */
	private final AtomicLong refusals = new AtomicLong();

	public Summarizer(WebClient.Builder builder, DemoProperties properties, LlmQuotaProperties quota) {
		this.properties = properties;
		LlmQuotaProperties.Provider provider = quota.getProviders().get(properties.getProvider());
		if (provider == null || provider.getBaseUrl() == null) {
			throw new IllegalStateException("demo.provider=" + properties.getProvider()
					+ " names no llm.quota.providers entry with a base-url");
		}
		this.direct = provider.getBaseUrl().replaceAll("/+$", "") + "/v1/chat/completions";
		// a route's calls go where llm-quota chooses; a call without it can
		// only go direct
		this.endpoint = properties.getRoute().isBlank() ? this.direct
				: LlmQuota.route(properties.getRoute()) + "/v1/chat/completions";
		// inside llm-quota's filter: sees every attempt, the ones it retries included
		ExchangeFilterFunction countRefusals = (request, next) -> next.exchange(request).doOnNext((response) -> {
			if (response.statusCode().value() == 429) {
				this.refusals.incrementAndGet();
			}
		});
		this.governed = builder.clone().filter(countRefusals).build();
		this.ungoverned = WebClient.builder().filter(countRefusals).build();
	}

	/**
	 * Summarises a text.
	 * @param text the document
	 * @param priority the call's class
	 * @param governed whether llm-quota admits the call
	 * @return the summary
	 */
	public Mono<Summary> summarize(String text, Priority priority, boolean governed) {
		Map<String, Object> body = Map.of("model", this.properties.getModel(), "max_tokens",
				this.properties.getMaxTokens(), "messages",
				List.of(Map.of("role", "system", "content", INSTRUCTION), Map.of("role", "user", "content", text)));
		WebClient.RequestBodySpec request = (governed ? this.governed : this.ungoverned).post()
			.uri(governed ? this.endpoint : this.direct)
			.contentType(MediaType.APPLICATION_JSON)
			.attribute(LlmQuota.PRIORITY, priority);
		if (!this.properties.getApiKey().isBlank()) {
			request = request.header(HttpHeaders.AUTHORIZATION, "Bearer " + this.properties.getApiKey());
		}
		Mono<Summary> answer = request.bodyValue(body).retrieve().bodyToMono(Map.class).map(Summarizer::summary);
		return governed ? answer : answer.retryWhen(Retry.from((signals) -> signals.concatMap((signal) -> {
			if (signal.totalRetries() < 3
					&& signal.failure() instanceof WebClientResponseException.TooManyRequests tooMany) {
				return Mono.delay(retryAfter(tooMany));
			}
			return Mono.error(signal.failure());
		})));
	}

	/**
	 * Returns how many rate-limit answers the service's clients received.
	 * @return the count
	 */
	public long refusals() {
		return this.refusals.get();
	}

	/**
	 * A summary and the tokens the provider billed for it.
	 *
	 * @param text the summary
	 * @param billedTokens input plus output tokens, as the answer's usage reports them (0
	 * when it reports none)
	 */
	public record Summary(String text, long billedTokens) {

	}

	private static Summary summary(Map<?, ?> answer) {
		String text = "";
		if (answer.get("choices") instanceof List<?> choices && !choices.isEmpty()
				&& choices.get(0) instanceof Map<?, ?> choice && choice.get("message") instanceof Map<?, ?> message) {
			text = String.valueOf(message.get("content"));
		}
		long billed = 0;
		if (answer.get("usage") instanceof Map<?, ?> usage && usage.get("total_tokens") instanceof Number total) {
			billed = total.longValue();
		}
		return new Summary(text, billed);
	}

	/** The provider's wait, read as llm-quota reads it; a second when it names none. */
	private static Duration retryAfter(WebClientResponseException refusal) {
		Duration wait = Waits.fromHeaders(refusal.getHeaders()::getFirst, Instant.now());
		return (wait != null) ? wait : Duration.ofSeconds(1);
	}

}
