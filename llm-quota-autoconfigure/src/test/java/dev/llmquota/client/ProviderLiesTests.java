package dev.llmquota.client;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

import dev.llmquota.QuotaExhaustedException;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.Pool;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.http.MediaType;
import org.springframework.web.client.HttpServerErrorException;

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
	@Test
	void anOverloadWithAWaitPastWhatALongHoldsReachesTheCaller() {
		try (LoopbackServer server = new LoopbackServer(503, JSON,
				"{\"error\":{\"message\":\"Overloaded. Please try again in 9223372036s1s\"}}");
				GovernedApp app = start(server)) {
			assertThatException().isThrownBy(() -> call(app, server, "RestClient"))
				.isInstanceOf(HttpServerErrorException.ServiceUnavailable.class);
			assertThat(server.requests()).hasSize(1);
		}
	}

	/**
	 * A limit nobody configured is learned from the headers: never one the answered call
	 * itself exceeds (a token limit of 1 held every later call for ever), and the latest
	 * report wins (a higher tier is followed without a restart).
	 */
	@Test
	void aLimitLearnedFromHeadersIsTheLatestReportAndNeverOneTheCallItselfExceeds() {
		try (LoopbackServer server = new LoopbackServer(200, withJson("x-ratelimit-limit-tokens", "1"), OK);
				GovernedApp app = start(server, "llm.quota.providers.p.models.m.requests-per-minute=1000")) {
			Pool pool = app.engine().pool("p", "m");
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
			call(app, server, "RestClient");
			assertThat(server.requests()).hasSize(4);
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
			assertThat(remaining).as("0 left, less a fifth of the configured 100,000").isBetween(-20_000L, -19_000L);
		}
	}

	/**
	 * A per-minute limit's reset a month away (a 429 that names no wait but its headers'
	 * reset): such a reset is long only while the account is in debt, never a month, so
	 * it is believed up to two hours, and calls flow again after that rather than fail
	 * for a month.
	 */
	@Test
	void aPerMinuteLimitsResetIsBelievedUpToTwoHours() {
		try (LoopbackServer server = new LoopbackServer(429,
				withJson("x-ratelimit-limit-requests", "1000", "x-ratelimit-remaining-requests", "0",
						"x-ratelimit-reset-requests", "720h"),
				"{\"error\":{\"message\":\"Rate limit reached\",\"type\":\"requests\"}}");
				GovernedApp app = start(server)) {
			Instant before = Instant.now();
			assertThatException().isThrownBy(() -> call(app, server, "RestClient"))
				.isInstanceOfSatisfying(QuotaExhaustedException.class, (spent) -> assertThat(spent.getReset())
					.isBetween(before.plus(Duration.ofHours(2)), Instant.now().plus(Duration.ofHours(2))));
		}
	}

	private static GovernedApp start(LoopbackServer server) {
		return start(server, "llm.quota.providers.p.models.m.tokens-per-minute=100000");
	}

	private static GovernedApp start(LoopbackServer server, String limit) {
		return GovernedApp.start("llm.quota.providers.p.base-url=" + server.baseUrl(),
				"llm.quota.providers.p.dialect=openai", "llm.quota.max-wait=3s", limit);
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
