package dev.llmquota.client;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import dev.llmquota.LlmQuota;
import dev.llmquota.QuotaExhaustedException;
import dev.llmquota.QuotaWaitTimeoutException;
import dev.llmquota.UnroutableCallException;
import dev.llmquota.autoconfigure.InvalidQuotaPropertyException;
import dev.llmquota.client.okhttp.LlmQuotaOkHttpInterceptor;
import dev.llmquota.core.ManualClock;
import dev.llmquota.core.Pool;
import dev.llmquota.core.QuotaClock;
import dev.llmquota.test.simulator.Fault;
import dev.llmquota.test.simulator.ProviderSimulator;
import dev.llmquota.test.simulator.ProviderSimulatorBuilder;
import dev.llmquota.test.simulator.RequestRecord;
import io.micrometer.core.instrument.MeterRegistry;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Routes ({@code llm.quota.routes.<name>}): one logical model over several provider
 * entries, each served by a simulator of its own account, each call sent to the target
 * whose admission is earliest, as WebClient, RestClient and OkHttp address it.
 */
class RoutesTests {

	private static final String CHAT = "/v1/chat/completions";

	private final List<AutoCloseable> closing = new ArrayList<>();

	@AfterEach
	void close() throws Exception {
		for (int i = this.closing.size() - 1; i >= 0; i--) {
			this.closing.get(i).close();
		}
	}

	@Test
	void callsSpreadOverTheTargetsEachWithItsOwnKeySoThatNoneIsRefused() {
		// two Azure regions and OpenAI direct as a spill-over, each refusing a key not
		// its own
		ProviderSimulator east = simulator(
				(sim) -> sim.model("gpt4o-east", (l) -> l.requestsPerMinute(20)).requireHeader("api-key", "east-key"));
		ProviderSimulator sweden = simulator(
				(sim) -> sim.model("gpt4o-se", (l) -> l.requestsPerMinute(40)).requireHeader("api-key", "sweden-key"));
		ProviderSimulator openai = simulator((sim) -> sim.model("gpt-4o", (l) -> l.requestsPerMinute(10))
			.requireHeader("Authorization", "Bearer openai-key"));
		GovernedApp app = web(
				entry("east", east, "azure-openai", "headers.api-key=east-key",
						"models.gpt4o-east.requests-per-minute=20"),
				entry("sweden", sweden, "azure-openai", "headers.api-key=sweden-key",
						"models.gpt4o-se.requests-per-minute=40"),
				entry("openai", openai, "openai", "headers.Authorization=Bearer openai-key",
						"models.gpt-4o.requests-per-minute=10"),
				target(0, "east", "gpt4o-east"), target(1, "sweden", "gpt4o-se"), target(2, "openai", "gpt-4o"),
				"llm.quota.routes.gpt4o.targets[2].spill-over=true");
		// 65 calls at once: the two primaries hold 60 a minute, the spill-over
		// takes the rest
		List<String> answers = Flux.range(0, 65)
			.flatMap((i) -> app.webClient()
				.post()
				.uri(LlmQuota.route("gpt4o") + CHAT)
				.contentType(MediaType.APPLICATION_JSON)
				.attribute(LlmQuota.MAX_WAIT, Duration.ofSeconds(2))
				.bodyValue(body("gpt-4o", false))
				.retrieve()
				.bodyToMono(String.class), 65)
			.collectList()
			.block(Duration.ofSeconds(60));
		assertThat(answers).hasSize(65);
		for (ProviderSimulator simulator : List.of(east, sweden, openai)) {
			assertThat(simulator.requestLog().refused()).as("refused by a target").isEmpty();
		}
		int spilled = openai.requestLog().size();
		assertThat(east.requestLog().size()).isLessThanOrEqualTo(20);
		assertThat(sweden.requestLog().size()).isLessThanOrEqualTo(40);
		assertThat(spilled).as("calls spilled to OpenAI direct").isBetween(1, 5);
		// (a simulator logs a call as it ends, which may be just after its caller has it)
		assertThat(east.requestLog().size() + sweden.requestLog().size() + spilled).isLessThanOrEqualTo(65);
		// each body names the model there
		assertThat(openai.requestLog().records()).extracting(RequestRecord::model).containsOnly("gpt-4o");
		assertThat(east.requestLog().records()).extracting(RequestRecord::model).containsOnly("gpt4o-east");
		// the endpoint shows each target's share and why it was passed over; meters count
		List<Long> taken = taken(app);
		assertThat(taken.get(2)).as("spilled").isBetween(1L, 5L);
		JsonNode route = JsonMapper.shared()
			.readTree(WebClient.create(app.serverUrl())
				.get()
				.uri("/actuator/llmquota")
				.retrieve()
				.bodyToMono(String.class)
				.block(Duration.ofSeconds(10)))
			.path("routes")
			.path(0);
		assertThat(route.path("name").asString()).isEqualTo("gpt4o");
		assertThat(route.path("url").asString()).isEqualTo("http://llm-quota.invalid/routes/gpt4o");
		JsonNode spill = route.path("targets").path(2);
		assertThat(spill.path("provider").asString()).isEqualTo("openai");
		assertThat(spill.path("spillOver").asBoolean()).isTrue();
		assertThat(spill.path("callsLastMinute").asLong()).isEqualTo(taken.get(2));
		double shares = 0;
		for (JsonNode target : route.path("targets")) {
			shares += target.path("shareLastMinute").asDouble();
		}
		assertThat(shares).isCloseTo(1.0, org.assertj.core.data.Offset.offset(0.01));
		assertThat(route.path("targets").path(0).path("skipped").asString()).contains("pool requests-per-minute");
		assertThat(app.context()
			.getBean(MeterRegistry.class)
			.get("llm.quota.route.calls")
			.tags("route", "gpt4o", "target", "openai/gpt-4o")
			.functionCounter()
			.count()).isEqualTo(taken.get(2).doubleValue());
	}

	@Test
	void aSpentTargetIsLeftAndProbedLater() {
		ProviderSimulator first = simulator((sim) -> sim.model("gpt-4o", (l) -> l.requestsPerMinute(600)));
		ProviderSimulator second = simulator((sim) -> sim.model("gpt-4o", (l) -> l.requestsPerMinute(600)));
		GovernedApp app = track(GovernedApp.startWith(ClockConfiguration.class,
				join(entry("first", first, "openai", "models.gpt-4o.requests-per-minute=600"),
						entry("second", second, "openai", "models.gpt-4o.requests-per-minute=600"),
						target(0, "first", "gpt-4o"), target(1, "second", "gpt-4o"),
						"llm.quota.retry.exhausted-probe-interval=1m")
					.toArray(String[]::new)));
		ManualClock clock = ClockConfiguration.CLOCK;
		assertThat(app.context().getBean(QuotaClock.class)).isSameAs(clock);
		// ties go to the first target
		restCall(app);
		assertThat(taken(app)).containsExactly(1L, 0L);
		first.exhausted(true);
		// the spent target refuses once; the call moves on without a retry of its own
		restCall(app);
		assertThat(first.requestLog().refused()).hasSize(1);
		assertThat(taken(app)).containsExactly(2L, 1L);
		for (int i = 0; i < 3; i++) {
			restCall(app);
		}
		assertThat(taken(app)).as("left while spent").containsExactly(2L, 4L);
		assertThat(app.context().getBean(LlmQuotaCalls.class).routes().get(0).targets().get(0).skipped())
			.contains("quota spent");
		// credit added: the probe, once its interval passed, finds the quota back
		first.exhausted(false);
		clock.advance(Duration.ofMinutes(1));
		restCall(app);
		restCall(app);
		assertThat(taken(app)).as("probed, then preferred again").containsExactly(4L, 4L);
		assertThat(first.requestLog().refused()).hasSize(1);
		assertThat(refusedMeter(app, "first/gpt-4o", "quota-spent")).isEqualTo(1);
		assertThat(refusedMeter(app, "first/gpt-4o", "rate-limited")).isZero();
	}

	private static double refusedMeter(GovernedApp app, String target, String reason) {
		return app.context()
			.getBean(MeterRegistry.class)
			.get("llm.quota.route.refused")
			.tags("route", "gpt4o", "target", target, "reason", reason)
			.functionCounter()
			.count();
	}

	@Test
	void aTargetWithNoKnownLimitGetsOneCallAtATime() throws Exception {
		ProviderSimulator known = simulator((sim) -> sim.model("gpt-4o", (l) -> l.requestsPerMinute(5)));
		// a region with no quota configured here and none in its headers: it allows one
		// at a
		// time, and refuses a second
		ProviderSimulator unknown = simulator((sim) -> sim.model("gpt-4o", (l) -> l.concurrentRequests(1))
			.latency((latency) -> latency.timeToFirstToken(Duration.ofMillis(30))));
		GovernedApp app = app(entry("known", known, "openai", "models.gpt-4o.requests-per-minute=5"),
				entry("unknown", unknown, "openai"), target(0, "known", "gpt-4o"), target(1, "unknown", "gpt-4o"));
		assertThat(okHttpCalls(app, 10)).hasSize(10).containsOnly("200");
		assertThat(taken(app)).containsExactly(5L, 5L);
		assertThat(unknown.requestLog().refused()).as("a second call at once would be refused").isEmpty();
	}

	/**
	 * Two routes over one deployment with no known limit share its probe: one call at a
	 * time reaches it, whichever route it came by, and whichever of its ids it is named
	 * by.
	 */
	@Test
	void aTargetWithNoKnownLimitGetsOneCallAtATimeAcrossRoutes() {
		ProviderSimulator unknown = simulator((sim) -> sim.account((l) -> l.concurrentRequests(1))
			.latency((latency) -> latency.timeToFirstToken(Duration.ofMillis(100))));
		GovernedApp app = app(entry("unknown", unknown, "openai", "models.gpt-4o.aliases[0]=gpt-4o-2024-08-06"),
				target(0, "unknown", "gpt-4o"), "llm.quota.routes.nightly.targets[0].provider=unknown",
				"llm.quota.routes.nightly.targets[0].model=gpt-4o-2024-08-06", "llm.quota.max-wait=10s");
		assertThat(okHttpCalls(app, 4, "gpt4o", "nightly")).containsOnly("200");
		assertThat(unknown.requestLog().refused()).as("a second call at once would be refused").isEmpty();
	}

	/**
	 * A target in shadow mode holds no call back, not for a probe either: two calls at
	 * once both go, where enforcing would keep the second for the first's end, past its
	 * max-wait.
	 */
	@Test
	void aTargetInShadowModeWithNoKnownLimitHoldsNoCallBack() {
		ProviderSimulator shadow = simulator((sim) -> sim.model("gpt-4o", (l) -> l.concurrentRequests(10))
			.latency((latency) -> latency.timeToFirstToken(Duration.ofMillis(600))));
		GovernedApp app = app(entry("shadow", shadow, "openai", "mode=shadow"), "llm.quota.max-wait=200ms",
				target(0, "shadow", "gpt-4o"));
		assertThat(okHttpCalls(app, 2)).containsOnly("200");
	}

	/**
	 * A target in shadow mode is chosen as enforcing would choose it, by its books,
	 * though it holds no call back: one whose books are full is passed over for a target
	 * with room, rather than sent calls its provider refuses.
	 */
	@Test
	void aShadowTargetWhoseBooksAreFullIsPassedOverForATargetWithRoom() {
		ProviderSimulator shadow = simulator((sim) -> sim.model("gpt-4o", (l) -> l.requestsPerMinute(1)));
		ProviderSimulator other = simulator((sim) -> sim.model("gpt-4o", (l) -> l.requestsPerMinute(600)));
		GovernedApp app = app(entry("shadow", shadow, "openai", "mode=shadow", "models.gpt-4o.requests-per-minute=1"),
				entry("other", other, "openai", "models.gpt-4o.requests-per-minute=600"), target(0, "shadow", "gpt-4o"),
				target(1, "other", "gpt-4o"));
		for (int i = 0; i < 3; i++) {
			restCall(app);
		}
		assertThat(shadow.requestLog().refused()).as("refused by the shadow target").isEmpty();
		assertThat(taken(app)).containsExactly(1L, 2L);
	}

	/**
	 * A call waiting at a target whose quota is found spent meanwhile (another call's
	 * answer said so) moves to the target with room, as a spent answer to it would have
	 * moved it, rather than failing.
	 */
	@Test
	void aCallWaitingAtATargetFoundSpentMeanwhileMovesToTheOtherTarget() throws Exception {
		ProviderSimulator first = simulator((sim) -> sim.model("gpt-4o", (l) -> l.requestsPerMinute(600)));
		ProviderSimulator second = simulator((sim) -> sim.model("gpt-4o", (l) -> l.requestsPerMinute(600)));
		// first: a call every 3 s; second: a call every 4 s
		GovernedApp app = app(
				entry("first", first, "openai", "models.gpt-4o.requests-per-minute=20", "burst-window=3s"),
				entry("second", second, "openai", "models.gpt-4o.requests-per-minute=15", "burst-window=4s"),
				target(0, "first", "gpt-4o"), target(1, "second", "gpt-4o"));
		restCall(app);
		restCall(app);
		assertThat(taken(app)).containsExactly(1L, 1L);
		// the third waits at first, free again sooner
		CompletableFuture<String> third = CompletableFuture.supplyAsync(() -> app.restClient()
			.post()
			.uri(LlmQuota.route("gpt4o") + CHAT)
			.contentType(MediaType.APPLICATION_JSON)
			.attribute(LlmQuota.MAX_WAIT, Duration.ofSeconds(20))
			.body(body("gpt-4o", false))
			.retrieve()
			.body(String.class));
		Pool spent = app.engine().pool("first", "gpt-4o");
		await().atMost(Duration.ofSeconds(10)).until(() -> app.engine().waiting(spent.account()) == 1);
		// another call's answer there said its quota is spent
		app.engine().exhaust(spent, false, null, "You exceeded your current quota", null);
		assertThat(third.get(30, TimeUnit.SECONDS)).contains("choices");
		assertThat(taken(app)).containsExactly(1L, 2L);
	}

	/**
	 * An operation goes under a base URL with a version of its own as a direct call to
	 * that entry would (Gemini's OpenAI-compatible /v1beta/openai, OpenRouter's /api/v1),
	 * and under /v1 where the base URL has none (a host, Groq's /openai); Azure's under
	 * its deployment, but for its Responses API.
	 */
	@Test
	void aTargetsOperationGoesUnderItsBaseUrlAsADirectCallWould() {
		GovernedApp app = app(entry("openai", "https://api.openai.com", "openai"),
				entry("gemini", "https://generativelanguage.googleapis.com/v1beta/openai/", "openai"),
				entry("groq", "https://api.groq.com/openai", "openai"),
				entry("openrouter", "https://openrouter.ai/api/v1", "openai"), target(0, "openai", "gpt-4o"),
				target(1, "gemini", "gemini-2.5-flash"), target(2, "groq", "llama-3.3-70b"),
				target(3, "openrouter", "openai/gpt-4o"),
				entry("azure", "https://east.openai.azure.com", "azure-openai", "headers.api-key=k"),
				target(4, "azure", "gpt4o-east"), "llm.quota.providers.azure.models.gpt4o-east.requests-per-minute=1",
				"llm.quota.providers.openai.models.gpt-4o.requests-per-minute=1",
				"llm.quota.providers.gemini.models.[gemini-2.5-flash].requests-per-minute=1",
				"llm.quota.providers.groq.models.[llama-3.3-70b].requests-per-minute=1",
				"llm.quota.providers.openrouter.models.[openai/gpt-4o].requests-per-minute=1");
		Route route = app.context().getBean(LlmQuotaCalls.class).routes().get(0);
		URI called = URI.create(LlmQuota.route("gpt4o") + "/v1/chat/completions?x=1");
		assertThat(route.targets()).extracting((target) -> route.uriFor(target, called).toString())
			.containsExactly("https://api.openai.com/v1/chat/completions?x=1",
					"https://generativelanguage.googleapis.com/v1beta/openai/chat/completions?x=1",
					"https://api.groq.com/openai/v1/chat/completions?x=1",
					"https://openrouter.ai/api/v1/chat/completions?x=1",
					"https://east.openai.azure.com/openai/deployments/gpt4o-east/chat/completions?x=1&api-version=2024-10-21");
		// Azure serves the Responses API on its v1 API only, the deployment in the body
		assertThat(route.uriFor(route.targets().get(4), URI.create(LlmQuota.route("gpt4o") + "/v1/responses")))
			.hasToString("https://east.openai.azure.com/openai/v1/responses");
	}

	/**
	 * A route over targets in different modes: an attempt admitted at a target in shadow
	 * mode hands its refusal on as it came, unmarked, whatever the mode of the route's
	 * first target.
	 */
	@Test
	void anAttemptAtAShadowTargetHandsItsRefusalOnAsItCame() throws Exception {
		ProviderSimulator first = simulator((sim) -> sim.model("gpt-4o", (l) -> l.requestsPerMinute(600)));
		try (LoopbackServer shadow = new LoopbackServer(400, Map.of("content-type", "application/json"),
				"{\"error\":{\"message\":\"bad request\",\"type\":\"invalid_request_error\"}}")) {
			GovernedApp app = app(entry("first", first, "openai", "models.gpt-4o.requests-per-minute=1"),
					entry("shadow", shadow.baseUrl(), "openai", "mode=shadow", "models.gpt-4o.requests-per-minute=600"),
					target(0, "first", "gpt-4o"), target(1, "shadow", "gpt-4o"));
			// the first target's one call a minute is taken: the next goes to the shadow
			// one
			restCall(app);
			OkHttpClient okHttp = new OkHttpClient.Builder()
				.addInterceptor(app.context().getBean(LlmQuotaOkHttpInterceptor.class))
				.build();
			try (Response response = okHttp
				.newCall(new Request.Builder().url(LlmQuota.route("gpt4o") + CHAT)
					.post(RequestBody.create(body("gpt-4o", false), okhttp3.MediaType.get("application/json")))
					.build())
				.execute()) {
				assertThat(response.code()).isEqualTo(400);
				assertThat(response.header("x-should-retry")).as("shadow mode marks nothing").isNull();
			}
			assertThat(shadow.requests()).hasSize(1);
		}
	}

	@Test
	void aRateLimitedTargetIsLeftForTheOneFreeFirst() {
		ProviderSimulator first = simulator((sim) -> sim.model("gpt-4o", (l) -> l.requestsPerMinute(600)));
		ProviderSimulator second = simulator((sim) -> sim.model("gpt-4o", (l) -> l.requestsPerMinute(600)));
		GovernedApp app = app(entry("first", first, "openai", "models.gpt-4o.requests-per-minute=600"),
				entry("second", second, "openai", "models.gpt-4o.requests-per-minute=600"),
				target(0, "first", "gpt-4o"), target(1, "second", "gpt-4o"));
		restCall(app);
		// the first account refuses the next call, to be tried again in 20 s
		first.faults().rateLimitWait(Duration.ofSeconds(20)).next(Fault.RATE_LIMITED);
		long start = System.nanoTime();
		restCall(app);
		restCall(app);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).as("not waited out").isLessThan(Duration.ofSeconds(10));
		assertThat(first.requestLog().refused()).hasSize(1);
		assertThat(taken(app)).as("left while its penalty holds").containsExactly(2L, 2L);
		assertThat(refusedMeter(app, "first/gpt-4o", "rate-limited")).isEqualTo(1);
		assertThat(refusedMeter(app, "second/gpt-4o", "rate-limited")).isZero();
	}

	@Test
	void eachTargetsCredentialsReachOnlyThatTarget() throws Exception {
		// east refuses for 30 s; the call moves to openai, which must not see east's key
		List<Map<String, String>> eastSaw = new java.util.concurrent.CopyOnWriteArrayList<>();
		List<Map<String, String>> openaiSaw = new java.util.concurrent.CopyOnWriteArrayList<>();
		com.sun.net.httpserver.HttpServer east = server(eastSaw, 429, "{\"error\":{\"code\":\"429\"}}");
		com.sun.net.httpserver.HttpServer openai = server(openaiSaw, 200, CHAT_ANSWER);
		String eastUrl = "http://127.0.0.1:" + east.getAddress().getPort();
		String openaiUrl = "http://127.0.0.1:" + openai.getAddress().getPort();
		GovernedApp app = app("llm.quota.providers.east.base-url=" + eastUrl,
				"llm.quota.providers.east.dialect=azure-openai", "llm.quota.providers.east.headers.api-key=east-key",
				"llm.quota.providers.east.models.gpt4o-east.requests-per-minute=600",
				"llm.quota.providers.openai.base-url=" + openaiUrl, "llm.quota.providers.openai.dialect=openai",
				"llm.quota.providers.openai.headers.Authorization=Bearer openai-key",
				"llm.quota.providers.openai.models.gpt-4o.requests-per-minute=600", target(0, "east", "gpt4o-east"),
				target(1, "openai", "gpt-4o"));
		// the caller's own key, as an OpenAI SDK sends it, reaches no target with keys of
		// its own
		callWithTheCallersOwnKey(app);
		assertThat(eastSaw).singleElement().satisfies((headers) -> {
			assertThat(headers).containsEntry("api-key", "east-key").doesNotContainKey("authorization");
			assertThat(headers.get("path"))
				.isEqualTo("/openai/deployments/gpt4o-east/chat/completions?api-version=2024-10-21");
		});
		assertThat(openaiSaw).singleElement().satisfies((headers) -> {
			assertThat(headers).containsEntry("authorization", "Bearer openai-key").doesNotContainKey("api-key");
			assertThat(headers.get("path")).isEqualTo("/v1/chat/completions");
		});
	}

	/**
	 * An entry that sets headers but no key (a project) takes the caller's key on a
	 * route, as on a direct call.
	 */
	@Test
	void aTargetWhoseEntrySetsNoKeyKeepsTheCallersOwnKey() throws Exception {
		List<Map<String, String>> openaiSaw = new java.util.concurrent.CopyOnWriteArrayList<>();
		com.sun.net.httpserver.HttpServer openai = server(openaiSaw, 200, CHAT_ANSWER);
		GovernedApp app = app("llm.quota.providers.openai.base-url=http://127.0.0.1:" + openai.getAddress().getPort(),
				"llm.quota.providers.openai.dialect=openai",
				"llm.quota.providers.openai.headers.OpenAI-Project=proj_abc",
				"llm.quota.providers.openai.models.gpt-4o.requests-per-minute=600", target(0, "openai", "gpt-4o"));
		callWithTheCallersOwnKey(app);
		assertThat(openaiSaw).singleElement()
			.satisfies((headers) -> assertThat(headers).containsEntry("openai-project", "proj_abc")
				.containsEntry("authorization", "Bearer sk-caller"));
	}

	/**
	 * Two entries behind one URL and key, told apart by a project header: a route's
	 * attempt at one carries that entry's project, whatever the caller sent, so the
	 * provider charges the account whose books the attempt is booked on.
	 */
	@Test
	void aRoutesAttemptCarriesTheMatchHeaderOfTheEntryItIsBookedOn() throws Exception {
		List<Map<String, String>> saw = new java.util.concurrent.CopyOnWriteArrayList<>();
		String url = "http://127.0.0.1:" + server(saw, 200, CHAT_ANSWER).getAddress().getPort();
		GovernedApp app = app(project("first", url, "proj_1"), project("second", url, "proj_2"),
				target(0, "second", "gpt-4o"));
		callWithTheCallersOwn(app, "OpenAI-Project", "proj_1");
		assertThat(app.engine().pool("second", "gpt-4o").stats().billedOutput()).as("booked on second").isPositive();
		assertThat(saw).singleElement()
			.satisfies((headers) -> assertThat(headers).containsEntry("openai-project", "proj_2"));
	}

	private static List<String> project(String id, String url, String project) {
		String prefix = "llm.quota.providers." + id + ".";
		return List.of(prefix + "base-url=" + url, prefix + "dialect=openai",
				// the name as pasted, with a space
				prefix + "match-header.name=OpenAI-Project ", prefix + "match-header.value=" + project,
				prefix + "models.gpt-4o.requests-per-minute=600");
	}

	private static final String CHAT_ANSWER = "{\"id\":\"x\",\"object\":\"chat.completion\",\"model\":\"gpt-4o\","
			+ "\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1,\"total_tokens\":6}}";

	/** A call to the route with a key of the caller's own, as an OpenAI SDK sends it. */
	private static void callWithTheCallersOwnKey(GovernedApp app) {
		callWithTheCallersOwn(app, "Authorization", "Bearer sk-caller");
	}

	/** A call to the route with a header of the caller's own. */
	private static void callWithTheCallersOwn(GovernedApp app, String header, String value) {
		app.restClient()
			.post()
			.uri(LlmQuota.route("gpt4o") + CHAT)
			.contentType(MediaType.APPLICATION_JSON)
			.header(header, value)
			.body(body("gpt-4o", false))
			.retrieve()
			.body(String.class);
	}

	/** A provider answering every call alike, noting each call's path and headers. */
	private com.sun.net.httpserver.HttpServer server(List<Map<String, String>> saw, int status, String answer)
			throws java.io.IOException {
		com.sun.net.httpserver.HttpServer server = com.sun.net.httpserver.HttpServer
			.create(new java.net.InetSocketAddress("127.0.0.1", 0), 0);
		server.createContext("/", (exchange) -> {
			exchange.getRequestBody().readAllBytes();
			Map<String, String> headers = new java.util.HashMap<>();
			exchange.getRequestHeaders()
				.forEach((name, values) -> headers.put(name.toLowerCase(java.util.Locale.ROOT), values.get(0)));
			headers.put("path", exchange.getRequestURI().toString());
			saw.add(headers);
			byte[] bytes = answer.getBytes(java.nio.charset.StandardCharsets.UTF_8);
			exchange.getResponseHeaders().set("Content-Type", "application/json");
			exchange.getResponseHeaders().set("retry-after", "30");
			exchange.sendResponseHeaders(status, bytes.length);
			exchange.getResponseBody().write(bytes);
			exchange.close();
		});
		server.start();
		this.closing.add(() -> server.stop(0));
		return server;
	}

	@Test
	void anthropicAccountsShareARouteEachWithItsOwnKey() {
		ProviderSimulator first = simulator((sim) -> sim.model("claude-sonnet-4-5", (l) -> l.requestsPerMinute(1))
			.requireHeader("x-api-key", "first-key"));
		ProviderSimulator second = simulator((sim) -> sim.model("claude-sonnet-4-5", (l) -> l.requestsPerMinute(600))
			.requireHeader("x-api-key", "second-key"));
		GovernedApp app = app(
				entry("first", first, "anthropic", "headers.x-api-key=first-key",
						"models.claude-sonnet-4-5.requests-per-minute=1"),
				entry("second", second, "anthropic", "headers.x-api-key=second-key",
						"models.claude-sonnet-4-5.requests-per-minute=600"),
				target(0, "first", "claude-sonnet-4-5"), target(1, "second", "claude-sonnet-4-5"));
		String body = JsonMapper.shared()
			.writeValueAsString(Map.of("model", "claude", "max_tokens", 10, "messages",
					List.of(Map.of("role", "user", "content", "Say ok."))));
		for (int i = 0; i < 2; i++) {
			assertThat(app.restClient()
				.post()
				.uri(LlmQuota.route("gpt4o") + "/v1/messages")
				.contentType(MediaType.APPLICATION_JSON)
				.header("anthropic-version", "2023-06-01")
				.body(body)
				.retrieve()
				.body(String.class)).contains("claude-sonnet-4-5");
		}
		// one a minute on the first account: the second call goes to the other
		assertThat(taken(app)).containsExactly(1L, 1L);
		assertThat(first.requestLog().refused()).isEmpty();
		assertThat(second.requestLog().refused()).isEmpty();
	}

	@Test
	void aStreamStaysOnItsTargetAndChargesItsUsageThere() {
		ProviderSimulator first = simulator((sim) -> sim.model("gpt-4o", (l) -> l.tokensPerMinute(100_000)));
		ProviderSimulator second = simulator((sim) -> sim.model("gpt-4o", (l) -> l.tokensPerMinute(100_000)));
		GovernedApp app = app(entry("first", first, "openai", "models.gpt-4o.tokens-per-minute=100000"),
				entry("second", second, "openai", "models.gpt-4o.tokens-per-minute=100000"),
				target(0, "first", "gpt-4o"), target(1, "second", "gpt-4o"));
		List<String> chunks = app.webClient()
			.post()
			.uri(LlmQuota.route("gpt4o") + CHAT)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body("gpt-4o", true))
			.retrieve()
			.bodyToFlux(String.class)
			.collectList()
			.block(Duration.ofSeconds(30));
		assertThat(chunks).isNotEmpty();
		assertThat(taken(app)).containsExactly(1L, 0L);
		assertThat(first.requestLog().refused()).isEmpty();
		assertThat(app.engine().pool("first", "gpt-4o").stats().billedOutput()).as("usage charged where it was served")
			.isPositive();
		assertThat(app.engine().pool("second", "gpt-4o").stats().billedOutput()).isZero();
	}

	@Test
	void whenNoTargetCanAdmitTheCallTheExceptionNamesTheRouteAndEachTargetsBinding() {
		ProviderSimulator first = simulator((sim) -> sim.model("gpt-4o", (l) -> l.requestsPerMinute(600)));
		ProviderSimulator second = simulator((sim) -> sim.model("gpt-4o", (l) -> l.requestsPerMinute(600)));
		GovernedApp app = app(entry("first", first, "openai", "models.gpt-4o.requests-per-minute=1"),
				entry("second", second, "openai", "models.gpt-4o.requests-per-minute=1"), target(0, "first", "gpt-4o"),
				target(1, "second", "gpt-4o"));
		restCall(app);
		restCall(app);
		assertThatThrownBy(() -> app.webClient()
			.post()
			.uri(LlmQuota.route("gpt4o") + CHAT)
			.contentType(MediaType.APPLICATION_JSON)
			.attribute(LlmQuota.MAX_WAIT, Duration.ofMillis(100))
			.bodyValue(body("gpt-4o", false))
			.retrieve()
			.bodyToMono(String.class)
			.block(Duration.ofSeconds(30))).isInstanceOf(QuotaWaitTimeoutException.class)
			.hasMessageContaining("route gpt4o")
			.hasMessageContaining("first/gpt-4o: pool requests-per-minute")
			.hasMessageContaining("second/gpt-4o: pool requests-per-minute");
		assertThat(taken(app)).containsExactly(1L, 1L);
	}

	/**
	 * A file upload, a batch, a listing: no model's quota, and no one target to send them
	 * to (a file uploaded to one deployment is unknown to the others). They fail at once,
	 * saying where to send them, rather than going to the first target charged as a model
	 * call (a 2 MiB upload estimated at half a million tokens).
	 */
	@Test
	void aCallThatSpendsNoModelsQuotaFailsOnARouteSayingWhereItGoes() throws Exception {
		ProviderSimulator first = simulator((sim) -> sim.model("gpt-4o", (l) -> l.requestsPerMinute(600)));
		GovernedApp app = app(entry("first", first, "openai", "models.gpt-4o.requests-per-minute=600"),
				target(0, "first", "gpt-4o"));
		byte[] upload = new byte[64 << 10];
		assertThatThrownBy(() -> app.restClient()
			.post()
			.uri(LlmQuota.route("gpt4o") + "/v1/files")
			.contentType(MediaType.APPLICATION_OCTET_STREAM)
			.body(upload)
			.retrieve()
			.body(String.class)).isInstanceOf(UnroutableCallException.class)
			.hasMessageContaining("Route 'gpt4o'")
			.hasMessageContaining("/v1/files")
			.hasMessageContaining("base-url");
		assertThatThrownBy(() -> app.restClient()
			.post()
			.uri(LlmQuota.route("gpt4o") + "/v1/responses/resp_123/cancel")
			.retrieve()
			.toBodilessEntity()).as("a background response's cancel, which only its deployment knows")
			.isInstanceOf(UnroutableCallException.class);
		assertThatThrownBy(() -> app.webClient()
			.get()
			.uri(LlmQuota.route("gpt4o") + "/v1/batches")
			.retrieve()
			.bodyToMono(String.class)
			.block(Duration.ofSeconds(30))).isInstanceOf(UnroutableCallException.class);
		// an SDK's call on OkHttp's dispatcher: an answer SDKs do not retry, not an
		// IOException they would
		OkHttpClient okHttp = new OkHttpClient.Builder()
			.addInterceptor(app.context().getBean(LlmQuotaOkHttpInterceptor.class))
			.build();
		CompletableFuture<Response> answered = OkHttpCalls
			.enqueue(okHttp.newCall(new Request.Builder().url(LlmQuota.route("gpt4o") + "/v1/models").build()));
		try (Response response = answered.get(30, TimeUnit.SECONDS)) {
			assertThat(response.code()).isEqualTo(400);
			assertThat(response.header("x-should-retry")).isEqualTo("false");
		}
		assertThat(first.requestLog().records()).isEmpty();
		assertThat(taken(app)).containsExactly(0L);
		restCall(app);
		assertThat(taken(app)).as("model calls go on").containsExactly(1L);
	}

	/**
	 * Every target says its day's quota is spent, with a reset of now
	 * ({@code retry-after:
	 * 0}), so none stays marked spent: the call moves at most once per target, then fails
	 * with the contract exception, on every stack; the retry signal between attempts
	 * never reaches the caller, and an SDK on OkHttp's dispatcher gets an answer it does
	 * not retry.
	 */
	@Test
	void aCallWhoseTargetsAllSayTheirQuotaIsSpentMovesOncePerTargetThenFails() throws Exception {
		String spentDay = "{\"error\":{\"message\":\"Rate limit reached for gpt-4o in organization org-x on requests"
				+ " per day (RPD): Limit 10000, Used 10000, Requested 1.\",\"type\":\"requests\",\"param\":null,"
				+ "\"code\":\"rate_limit_exceeded\"}}";
		Map<String, String> headers = Map.of("Content-Type", "application/json", "retry-after", "0");
		LoopbackServer first = track(new LoopbackServer(429, headers, spentDay));
		LoopbackServer second = track(new LoopbackServer(429, headers, spentDay));
		GovernedApp app = app(entry("first", first.baseUrl(), "openai", "models.gpt-4o.requests-per-minute=6000"),
				entry("second", second.baseUrl(), "openai", "models.gpt-4o.requests-per-minute=6000"),
				target(0, "first", "gpt-4o"), target(1, "second", "gpt-4o"), "llm.quota.max-wait=5s");
		OkHttpClient okHttp = new OkHttpClient.Builder()
			.addInterceptor(app.context().getBean(LlmQuotaOkHttpInterceptor.class))
			.build();
		Request request = new Request.Builder().url(LlmQuota.route("gpt4o") + CHAT)
			.post(RequestBody.create(body("gpt-4o", false), okhttp3.MediaType.get("application/json")))
			.build();
		assertThatThrownBy(() -> restCall(app)).as("RestClient").isInstanceOf(QuotaExhaustedException.class);
		assertThat(List.of(first.requests().size(), second.requests().size())).as("requests of one call, by target")
			.containsExactly(1, 1);
		assertThatThrownBy(() -> app.webClient()
			.post()
			.uri(LlmQuota.route("gpt4o") + CHAT)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body("gpt-4o", false))
			.retrieve()
			.bodyToMono(String.class)
			.block(Duration.ofSeconds(30))).as("WebClient").isInstanceOf(QuotaExhaustedException.class);
		assertThatThrownBy(() -> okHttp.newCall(request).execute().close()).as("OkHttp")
			.isInstanceOf(QuotaExhaustedException.class);
		try (Response answer = OkHttpCalls.enqueue(okHttp.newCall(request)).get(30, TimeUnit.SECONDS)) {
			assertThat(answer.header("x-should-retry")).isEqualTo("false");
			assertThat(answer.header("x-llm-quota-exception")).isEqualTo("QuotaExhaustedException");
		}
		assertThat(List.of(first.requests().size(), second.requests().size())).as("requests of four calls, by target")
			.containsExactly(4, 4);
		// a target with quota behind the spent one: the call moves there, once
		second.answer(200, Map.of("Content-Type", "application/json"),
				"{\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":5}}");
		restCall(app);
		assertThat(List.of(first.requests().size(), second.requests().size())).containsExactly(5, 5);
	}

	/**
	 * A rate limit between two spent answers starts a new attempt: the call still never
	 * goes back to the target that said so, and fails with the contract exception once
	 * every target has.
	 */
	@Test
	void aCallWhoseTargetsAllSaidSpentAroundARateLimitFailsAsQuotaExhausted() {
		String spentDay = "{\"error\":{\"message\":\"Rate limit reached for gpt-4o on requests per day (RPD)\","
				+ "\"type\":\"requests\",\"code\":\"rate_limit_exceeded\"}}";
		String perMinute = "{\"error\":{\"message\":\"Rate limit reached for gpt-4o on requests per min (RPM)\","
				+ "\"type\":\"requests\",\"code\":\"rate_limit_exceeded\"}}";
		Map<String, String> headers = Map.of("Content-Type", "application/json", "retry-after", "0");
		LoopbackServer first = track(new LoopbackServer(429, headers, spentDay));
		// rate-limited first, then spent
		LoopbackServer second = track(new LoopbackServer(429, headers, perMinute));
		second.answerNext(429, headers, spentDay);
		GovernedApp app = app(entry("first", first.baseUrl(), "openai", "models.gpt-4o.requests-per-minute=6000"),
				entry("second", second.baseUrl(), "openai", "models.gpt-4o.requests-per-minute=6000"),
				target(0, "first", "gpt-4o"), target(1, "second", "gpt-4o"), "llm.quota.max-wait=5s",
				"llm.quota.retry.initial-backoff=10ms");
		assertThatThrownBy(() -> restCall(app)).isInstanceOf(QuotaExhaustedException.class);
		assertThat(List.of(first.requests().size(), second.requests().size())).as("requests by target")
			.containsExactly(1, 2);
	}

	@Test
	void aOneTargetRouteAsksItsSpentTargetOnce() {
		Map<String, String> headers = Map.of("Content-Type", "application/json", "retry-after", "0");
		LoopbackServer only = track(new LoopbackServer(429, headers,
				"{\"error\":{\"message\":\"Rate limit reached for gpt-4o on requests per day (RPD)\",\"type\":"
						+ "\"requests\",\"code\":\"rate_limit_exceeded\"}}"));
		GovernedApp app = app(entry("only", only.baseUrl(), "openai", "models.gpt-4o.requests-per-minute=6000"),
				target(0, "only", "gpt-4o"));
		assertThatThrownBy(() -> restCall(app)).isInstanceOf(QuotaExhaustedException.class);
		assertThat(only.requests()).hasSize(1);
	}

	@Test
	void aRouteLlmQuotaCannotServeStopsStartUpNamingTheProperty() {
		ProviderSimulator simulator = simulator((sim) -> {
		});
		Map<List<String>, String> mistakes = Map.of(
				// (two entries on one simulator: a match-header tells their calls apart)
				join(entry("openai", simulator, "openai"),
						entry("anthropic", simulator, "anthropic", "match-header.name=X-Format",
								"match-header.value=anthropic"),
						target(0, "openai", "gpt-4o"), target(1, "anthropic", "claude")),
				"llm.quota.routes.gpt4o.targets[1].provider",
				join(entry("bedrock", simulator, "bedrock"), target(0, "bedrock", "model")),
				"llm.quota.routes.gpt4o.targets[0].provider",
				join(entry("openai", simulator, "openai"), target(0, "nowhere", "gpt-4o")),
				"llm.quota.routes.gpt4o.targets[0].provider",
				join(entry("openai", simulator, "openai"), target(0, "openai", "gpt-4o"),
						"llm.quota.routes.gpt4o.targets[0].spill-over=true"),
				"llm.quota.routes.gpt4o.targets",
				// Ollama's OpenAI-compatible API sends no rate-limit headers:
				// its limits must be configured
				join(List.of("llm.quota.providers.local.base-url=http://127.0.0.1:11434/v1",
						"llm.quota.providers.local.dialect=openai"), target(0, "local", "llama3")),
				"llm.quota.routes.gpt4o.targets[0].provider");
		mistakes.forEach((properties,
				property) -> assertThatThrownBy(() -> GovernedApp.start(properties.toArray(String[]::new)).close())
					.satisfies((failure) -> {
						Throwable cause = failure;
						while (cause != null && !(cause instanceof InvalidQuotaPropertyException)) {
							cause = cause.getCause();
						}
						assertThat(cause).as(property).isInstanceOf(InvalidQuotaPropertyException.class);
						assertThat(((InvalidQuotaPropertyException) cause).getProperty()).isEqualTo(property);
					}));
	}

	/** The attempts each target of the route took, in order. */
	private static List<Long> taken(GovernedApp app) {
		return app.context()
			.getBean(LlmQuotaCalls.class)
			.routes()
			.get(0)
			.targets()
			.stream()
			.map(Route.Target::taken)
			.toList();
	}

	/**
	 * Sends calls at once to the route through OkHttp under the interceptor; returns each
	 * one's status, or the exception it ended with.
	 */
	private static List<String> okHttpCalls(GovernedApp app, int calls) {
		return okHttpCalls(app, calls, "gpt4o");
	}

	/** Calls at once, spread over the routes in turn. */
	private static List<String> okHttpCalls(GovernedApp app, int calls, String... routes) {
		OkHttpClient okHttp = new OkHttpClient.Builder()
			.addInterceptor(app.context().getBean(LlmQuotaOkHttpInterceptor.class))
			.build();
		return Flux.range(0, calls).flatMap((i) -> Mono.fromCallable(() -> {
			try (Response response = okHttp
				.newCall(new Request.Builder().url(LlmQuota.route(routes[i % routes.length]) + CHAT)
					.post(RequestBody.create(body("gpt-4o", false), okhttp3.MediaType.get("application/json")))
					.build())
				.execute()) {
				return Integer.toString(response.code());
			}
			catch (RuntimeException ex) {
				return ex.toString();
			}
		}).subscribeOn(reactor.core.scheduler.Schedulers.boundedElastic()), calls).collectList().block();
	}

	private void restCall(GovernedApp app) {
		try {
			app.restClient()
				.post()
				.uri(LlmQuota.route("gpt4o") + CHAT)
				.contentType(MediaType.APPLICATION_JSON)
				.body(body("gpt-4o", false))
				.retrieve()
				.body(String.class);
		}
		catch (WebClientResponseException ex) {
			throw new AssertionError(ex.getResponseBodyAsString(), ex);
		}
	}

	private ProviderSimulator simulator(Consumer<ProviderSimulatorBuilder> configure) {
		ProviderSimulatorBuilder builder = ProviderSimulator.builder();
		configure.accept(builder);
		return track(builder.start());
	}

	private <T extends AutoCloseable> T track(T closeable) {
		this.closing.add(closeable);
		return closeable;
	}

	private GovernedApp web(Object... properties) {
		return track(GovernedApp.startWeb(
				join(join(properties), "management.endpoints.web.exposure.include=llmquota").toArray(String[]::new)));
	}

	private GovernedApp app(Object... properties) {
		return track(GovernedApp.start(join(properties).toArray(String[]::new)));
	}

	/** A provider entry of one account: its simulator, dialect and settings. */
	private static List<String> entry(String id, ProviderSimulator simulator, String dialect, String... settings) {
		return entry(id, simulator.baseUrl(), dialect, settings);
	}

	private static List<String> entry(String id, String baseUrl, String dialect, String... settings) {
		String prefix = "llm.quota.providers." + id + ".";
		List<String> properties = new ArrayList<>(List.of(prefix + "base-url=" + baseUrl, prefix + "dialect=" + dialect,
				prefix + "burst-window=60s", prefix + "in-flight-gate=false", "llm.quota.headroom=1.0"));
		for (String setting : settings) {
			properties.add(prefix + setting);
		}
		return properties;
	}

	/** A target of the route {@code gpt4o}. */
	private static List<String> target(int index, String provider, String model) {
		String prefix = "llm.quota.routes.gpt4o.targets[" + index + "].";
		return List.of(prefix + "provider=" + provider, prefix + "model=" + model);
	}

	/** Properties and lists of them, in one list. */
	private static List<String> join(Object... parts) {
		List<String> all = new ArrayList<>();
		for (Object part : parts) {
			if (part instanceof List<?> list) {
				list.forEach((item) -> all.add(item.toString()));
			}
			else {
				all.add(part.toString());
			}
		}
		return all;
	}

	private static String body(String model, boolean stream) {
		return JsonMapper.shared()
			.writeValueAsString(Map.of("model", model, "max_tokens", 10, "stream", stream, "messages",
					List.of(Map.of("role", "user", "content", "Say ok."))));
	}

	@Configuration(proxyBeanMethods = false)
	static class ClockConfiguration {

		static final ManualClock CLOCK = new ManualClock();

		@Bean
		QuotaClock llmQuotaClock() {
			return CLOCK;
		}

	}

}
