package dev.llmquota.client;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;

import dev.llmquota.client.restclient.LlmQuotaClientHttpRequestInterceptor;
import dev.llmquota.core.Account;
import dev.llmquota.core.QuotaEngine;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.http.client.ClientHttpRequestFactoryBuilder;
import org.springframework.boot.http.client.HttpClientSettings;
import org.springframework.http.MediaType;
import org.springframework.http.client.ClientHttpRequestFactory;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * However a RestClient call breaks, on whichever request factory Spring Boot can
 * auto-configure, its slot is given back at once and the caller sees Spring's usual
 * exception, not a raw I/O one.
 */
class RestClientFaultTests {

	private static final int CALLS = 60;

	private static FaultyServer server;

	private static GovernedApp app;

	@BeforeAll
	static void start() {
		server = new FaultyServer();
		app = GovernedApp.start("llm.quota.providers.faulty.base-url=" + server.baseUrl(),
				"llm.quota.providers.faulty.dialect=openai",
				"llm.quota.providers.faulty.models.gpt-4o.concurrent-requests=100",
				"llm.quota.providers.faulty.models.gpt-4o.requests-per-minute=100000", "llm.quota.max-wait=5s");
	}

	@AfterAll
	static void stop() {
		app.close();
		server.close();
	}

	@Test
	void aCallBrokenAtAnyStageOnAnyRequestFactoryGivesItsSlotBackAtOnce() {
		long seed = Long.getLong("llmquota.seed", System.nanoTime());
		System.out.println("RestClientFaultTests seed: " + seed + " (replay with -Dllmquota.seed=" + seed + ")");
		Random random = new Random(seed);
		Map<String, ClientHttpRequestFactoryBuilder<?>> factories = Map.of("jdk", ClientHttpRequestFactoryBuilder.jdk(),
				"simple", ClientHttpRequestFactoryBuilder.simple(), "reactor",
				ClientHttpRequestFactoryBuilder.reactor(), "http-components",
				ClientHttpRequestFactoryBuilder.httpComponents(), "jetty", ClientHttpRequestFactoryBuilder.jetty());
		List<String> names = factories.keySet().stream().sorted().toList();
		// only a silent server needs the read timeout to end the exchange; elsewhere a
		// short one would fail a slow first call on a busy machine
		HttpClientSettings silentSettings = HttpClientSettings.defaults()
			.withTimeouts(Duration.ofSeconds(2), Duration.ofMillis(300));
		HttpClientSettings settings = HttpClientSettings.defaults()
			.withTimeouts(Duration.ofSeconds(2), Duration.ofSeconds(10));
		LlmQuotaClientHttpRequestInterceptor interceptor = app.context()
			.getBean(LlmQuotaClientHttpRequestInterceptor.class);
		QuotaEngine engine = app.engine();
		Account account = engine.accounts().iterator().next();
		for (int i = 0; i < CALLS; i++) {
			String name = names.get(random.nextInt(names.size()));
			// broken refusals: BrokenRefusalTests
			FaultyServer.Stage stage = FaultyServer.Stage.values()[random
				.nextInt(FaultyServer.Stage.REFUSAL_BODY.ordinal())];
			boolean refused = random.nextInt(8) == 0;
			String where = "call " + i + " on " + name + ", broken at " + (refused ? "connect" : stage) + ", seed "
					+ seed;
			server.failAt(stage);
			ClientHttpRequestFactory factory = factories.get(name)
				.build((stage == FaultyServer.Stage.SILENT) ? silentSettings : settings);
			RestClient client = RestClient.builder().requestFactory(factory).requestInterceptor(interceptor).build();
			String url = refused ? "http://127.0.0.1:1/v1/chat/completions" : server.baseUrl() + "/v1/chat/completions";
			try {
				String answer = client.post()
					.uri(url)
					.contentType(MediaType.APPLICATION_JSON)
					.body("{\"model\":\"gpt-4o\",\"max_tokens\":10,\"stream\":"
							+ (stage == FaultyServer.Stage.MID_STREAM)
							+ ",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}")
					.retrieve()
					.body(String.class);
				if (refused || stage != FaultyServer.Stage.NONE) {
					// a client may read a truncated stream to its end without an error
					assertThat(stage).as(where).isIn(FaultyServer.Stage.MID_STREAM, FaultyServer.Stage.BODY);
				}
				else {
					assertThat(answer).as(where).contains("Hello");
				}
			}
			catch (RuntimeException ex) {
				if (stage == FaultyServer.Stage.NONE && !refused) {
					fail(where + ": " + ex, ex);
				}
				boolean noAnswer = refused || stage == FaultyServer.Stage.SEND || stage == FaultyServer.Stage.STATUS
						|| stage == FaultyServer.Stage.SILENT;
				if (noAnswer) {
					// no answer at all: the caller sees what Spring gives without
					// llm-quota
					assertThat(ex).as(where).isInstanceOf(ResourceAccessException.class);
				}
				// broken headers, or a body that breaks while the caller reads
				// it, fail as the stack reports them
			}
			assertThat(engine.inFlight(account)).as("%s: slots in use after the call", where).isZero();
		}
	}

}
