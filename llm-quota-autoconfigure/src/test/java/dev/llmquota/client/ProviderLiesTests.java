package dev.llmquota.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.llmquota.QuotaExhaustedException;
import dev.llmquota.RateLimitedException;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.Pool;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.http.MediaType;
import org.springframework.web.client.HttpServerErrorException;
import org.springframework.web.reactive.function.client.WebClientResponseException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * A provider, or a proxy before it, whose headers and waits lie: no value of theirs may
 * break a call with llm-quota's own error, nor hold a pool for longer than the provider
 * itself would.
 */
class ProviderLiesTests {

	private static final Duration PATIENCE = Duration.ofSeconds(10);

	private static final String OK = "{\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":5}}";

	private static final Map<String, String> JSON = Map.of("content-type", "application/json");

	/**
	 * A wait of two parts, each near what a long holds ("9223372036s1s"), summed past it:
	 * it wrapped to a negative wait, which the blocking clients' retry slept on and
	 * failed with llm-quota's internal {@code RetryAfter}, and WebClient retried at once.
	 * It is a wait no quota has: a spent quota, probed now and then.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "RestClient", "WebClient" })
	void aWaitPastWhatALongHoldsIsASpentQuotaNotANegativeWait(String client) {
		try (LoopbackServer server = new LoopbackServer(429, JSON,
				"{\"error\":{\"message\":\"Rate limit reached for m on requests per min (RPM). Please try again in"
						+ " 9223372036s1s.\",\"type\":\"requests\",\"code\":\"rate_limit_exceeded\"}}");
				GovernedApp app = start(server)) {
			assertThatException().isThrownBy(() -> call(app, server, client))
				.isInstanceOf(QuotaExhaustedException.class);
			assertThat(server.requests()).as("not retried").hasSize(1);
		}
	}

	/**
	 * The same wait on an overload: longer than any backoff, the answer is the caller's.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "RestClient", "WebClient" })
	void anOverloadWithAWaitPastWhatALongHoldsReachesTheCaller(String client) {
		try (LoopbackServer server = new LoopbackServer(503, JSON,
				"{\"error\":{\"message\":\"Overloaded. Please try again in 9223372036s1s\"}}");
				GovernedApp app = start(server)) {
			assertThatException().isThrownBy(() -> call(app, server, client))
				.satisfies((ex) -> assertThat(ex).isInstanceOfAny(HttpServerErrorException.ServiceUnavailable.class,
						WebClientResponseException.ServiceUnavailable.class))
				.satisfies((ex) -> assertThat(((ex instanceof HttpServerErrorException rest) ? rest.getResponseHeaders()
						: ((WebClientResponseException) ex).getHeaders())
					.getFirst("x-should-retry")).as("marked, so a client that retries by itself does not")
					.isEqualTo("false"));
			assertThat(server.requests()).hasSize(1);
		}
	}

	/**
	 * A limit nobody configured is learned from the headers: never a token limit no
	 * provider sells (1 held every later call for ever, whether a success or a refusal
	 * reported it), and the latest report wins (a higher tier is followed without a
	 * restart).
	 */
	@Test
	void aLimitLearnedFromHeadersIsTheLatestReportAndNeverOneNoProviderSells() {
		try (LoopbackServer server = new LoopbackServer(429,
				withJson("x-ratelimit-limit-tokens", "1", "x-should-retry", "false"),
				"{\"error\":{\"message\":\"Rate limit reached\",\"type\":\"tokens\"}}");
				GovernedApp app = start(server, "llm.quota.providers.p.models.m.requests-per-minute=1000")) {
			Pool pool = app.engine().pool("p", "m");
			assertThatException().isThrownBy(() -> call(app, server, "RestClient"));
			server.answer(200, withJson("x-ratelimit-limit-tokens", "1"), OK);
			call(app, server, "RestClient");
			assertThat(pool.limits().asMap()).doesNotContainKey(Dimension.TOKENS_PER_MINUTE);
			server.answer(200,
					withJson("x-ratelimit-limit-tokens", "2000000", "x-ratelimit-remaining-tokens", "1999000"), OK);
			call(app, server, "RestClient");
			assertThat(pool.limits().asMap()).containsEntry(Dimension.TOKENS_PER_MINUTE, 2_000_000L);
			server.answer(200,
					withJson("x-ratelimit-limit-tokens", "3000000", "x-ratelimit-remaining-tokens", "2999000"), OK);
			call(app, server, "RestClient");
			assertThat(pool.limits().asMap()).containsEntry(Dimension.TOKENS_PER_MINUTE, 3_000_000L);
		}
	}

	/**
	 * A reported limit far above the configured one ({@code 999999999999999999}, or an
	 * organisation's whole limit where this service is given a share): the spare share
	 * kept for others is taken of the smaller of the two, so a report of nothing left
	 * takes the bucket into the debt the configured limit's share makes, not one no
	 * refill repays.
	 */
	@Test
	void theShareKeptForOthersIsOfTheSmallerOfTheReportedAndTheConfiguredLimit() {
		try (LoopbackServer server = new LoopbackServer(200,
				withJson("x-ratelimit-limit-tokens", "999999999999999999", "x-ratelimit-remaining-tokens", "0"), OK);
				GovernedApp app = start(server)) {
			call(app, server, "RestClient");
			long remaining = app.engine()
				.snapshot(app.engine().pool("p", "m"))
				.bucket(BucketSpec.Scope.POOL, Dimension.TOKENS_PER_MINUTE)
				.remaining();
			assertThat(remaining).as("0 left, less a fifth of the configured 100,000 (and what refills in 7 s)")
				.isBetween(-20_000L, -10_000L);
		}
	}

	/**
	 * A per-minute limit's reset a month away, on a 429 that names no wait: a reset is
	 * the time until the limit is whole again, which a per-minute limit never puts a
	 * month away. It is not believed: the call backs off as for a refusal that names no
	 * wait, rather than fail with a quota spent for a month (or held for hours).
	 */
	@Test
	void aPerMinuteLimitsResetAMonthAwayIsNotBelieved() {
		try (LoopbackServer server = new LoopbackServer(429, withJson("x-ratelimit-reset-requests", "720h"),
				"{\"error\":{\"message\":\"Rate limit reached\",\"type\":\"requests\"}}");
				GovernedApp app = start(server)) {
			assertThatException().isThrownBy(() -> call(app, server, "RestClient"))
				.isInstanceOf(RateLimitedException.class);
			assertThat(server.requests()).as("retried after backing off").hasSizeGreaterThan(1);
			server.answer(200, JSON, OK);
			assertThat(call(app, server, "RestClient")).isEqualTo(OK);
		}
	}

	/**
	 * A refusal whose wait is nothing ({@code retry-after: 0}, or a date already past):
	 * the limit it names is spent now, so an attempt at once is refused again. It backs
	 * off as a refusal naming no wait does (100 ms, then 200 ms here), rather than spend
	 * every attempt within a few milliseconds, or wait for the reset header's full
	 * refill.
	 */
	@Test
	void aRefusalWhoseWaitIsNothingBacksOffAsForNoWait() {
		String refusal = "{\"error\":{\"message\":\"Rate limit reached\",\"type\":\"requests\"}}";
		try (LoopbackServer server = new LoopbackServer(429, withJson("retry-after", "0"), refusal);
				GovernedApp app = start(server, "llm.quota.providers.p.models.m.tokens-per-minute=100000",
						"llm.quota.retry.max-attempts=3", "llm.quota.retry.initial-backoff=100ms")) {
			for (String retryAfter : List.of("0", "Thu, 01 Jan 1970 00:00:00 GMT")) {
				// a reset header too: its time to full refill does not stand in for the
				// wait
				server.answer(429, withJson("retry-after", retryAfter, "x-ratelimit-remaining-requests", "0",
						"x-ratelimit-reset-requests", "6m0s"), refusal);
				int before = server.requests().size();
				long start = System.nanoTime();
				assertThatException().isThrownBy(() -> call(app, server, "RestClient"))
					.isInstanceOf(RateLimitedException.class);
				assertThat(server.requests()).hasSize(before + 3);
				assertThat(Duration.ofNanos(System.nanoTime() - start))
					.as("retry-after: %s backed off twice", retryAfter)
					.isGreaterThanOrEqualTo(Duration.ofMillis(300));
			}
		}
	}

	private static GovernedApp start(LoopbackServer server) {
		return start(server, "llm.quota.providers.p.models.m.tokens-per-minute=100000");
	}

	private static GovernedApp start(LoopbackServer server, String... settings) {
		List<String> properties = new ArrayList<>(List.of("llm.quota.providers.p.base-url=" + server.baseUrl(),
				"llm.quota.providers.p.dialect=openai", "llm.quota.max-wait=3s"));
		properties.addAll(List.of(settings));
		return GovernedApp.start(properties.toArray(String[]::new));
	}

	private static Map<String, String> withJson(String... headers) {
		Map<String, String> all = new java.util.LinkedHashMap<>(JSON);
		for (int i = 0; i < headers.length; i += 2) {
			all.put(headers[i], headers[i + 1]);
		}
		return all;
	}

	private static String call(GovernedApp app, LoopbackServer server, String client) {
		String body = "{\"model\":\"m\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
		String url = server.baseUrl() + "/v1/chat/completions";
		if (client.equals("RestClient")) {
			return app.restClient()
				.post()
				.uri(url)
				.contentType(MediaType.APPLICATION_JSON)
				.body(body)
				.retrieve()
				.body(String.class);
		}
		return app.webClient()
			.post()
			.uri(url)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body)
			.retrieve()
			.bodyToMono(String.class)
			.block(PATIENCE);
	}

}
