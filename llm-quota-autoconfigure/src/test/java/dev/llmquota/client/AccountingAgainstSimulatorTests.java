package dev.llmquota.client;

import java.io.InputStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

import dev.llmquota.LlmQuota;
import dev.llmquota.client.okhttp.LlmQuotaOkHttpInterceptor;
import dev.llmquota.core.Account;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.Pool;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.core.RecordingStore;
import dev.llmquota.store.LocalQuotaStore;
import dev.llmquota.test.simulator.Fault;
import dev.llmquota.test.simulator.ProviderSimulator;
import dev.llmquota.test.simulator.RequestRecord;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import reactor.netty.http.client.HttpClientRequest;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.MediaType;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

/**
 * Random mixes of every call shape, through WebClient, RestClient and OkHttp, against a
 * simulated provider of every dialect. At the end the local books hold, per pool and
 * dimension, what the simulator billed: never less, exactly that for calls whose usage
 * came back, and more only by what llm-quota could not see (an answer that never came, a
 * stream cancelled before its usage, an embedding without a count). Nothing is left in
 * flight. The seed is printed; {@code -Dllmquota.seed=<seed>} replays a run.
 */
class AccountingAgainstSimulatorTests {

	private static final int CALLS = 90;

	private static final Duration PATIENCE = Duration.ofSeconds(15);

	/** The clients' read timeout; the simulator holds delayed headers well beyond it. */
	private static final Duration READ_TIMEOUT = Duration.ofMillis(400);

	private static final Duration HEADER_DELAY = Duration.ofMillis(1_500);

	private static final String MODEL = "test-model";

	/** A model of one request a minute, for calls that cannot be admitted in time. */
	private static final String TIGHT = "tight-model";

	private static final List<Dimension> DIMENSIONS = List.of(Dimension.REQUESTS_PER_MINUTE,
			Dimension.TOKENS_PER_MINUTE, Dimension.INPUT_TOKENS_PER_MINUTE, Dimension.OUTPUT_TOKENS_PER_MINUTE);

	enum Shape {

		CHAT, STREAM, EMBEDDINGS, BEDROCK_STREAM, RESPONSES_STREAM, REFUSED, CANCELLED, READ_TIMEOUT, ADMISSION_TIMEOUT

	}

	enum Client {

		WEB_CLIENT, REST_CLIENT, OK_HTTP,

		/** OkHttp without a read timeout, for the first call of a cold JVM. */
		OK_HTTP_UNHURRIED

	}

	/** The store of the application under test, which records every unit it moves. */
	@Configuration(proxyBeanMethods = false)
	static class Recording {

		@Bean
		RecordingStore recordingStore() {
			return new RecordingStore(new LocalQuotaStore());
		}

	}

	/**
	 * What one call sent, how many requests the provider saw of it, and whether llm-quota
	 * could see its usage.
	 */
	private record Sent(DialectCase dialect, Shape shape, Client client, String model, int maxTokens,
			boolean unreported, int requests) {

	}

	@Test
	void theBooksHoldWhatTheProviderBilledForEveryShapeThroughEveryClient() {
		long seed = Long.getLong("llmquota.seed", System.nanoTime());
		System.out
			.println("AccountingAgainstSimulatorTests seed: " + seed + " (replay with -Dllmquota.seed=" + seed + ")");
		Random random = new Random(seed);
		Map<DialectCase, ProviderSimulator> simulators = new EnumMap<>(DialectCase.class);
		GovernedApp app = null;
		try {
			List<String> properties = new ArrayList<>(
					List.of("llm.quota.headroom=1.0", "llm.quota.retry.max-attempts=3",
							"spring.http.clients.read-timeout=" + READ_TIMEOUT.toMillis() + "ms"));
			for (DialectCase dialect : DialectCase.values()) {
				ProviderSimulator simulator = ProviderSimulator.builder()
					.seed(seed)
					.headerDelay(HEADER_DELAY)
					.defaultModel((limits) -> limits.requestsPerMinute(10_000_000)
						.tokensPerMinute(10_000_000_000L)
						.inputTokensPerMinute(10_000_000_000L)
						.outputTokensPerMinute(10_000_000_000L))
					.latency((latency) -> latency.timeToFirstToken(Duration.ZERO)
						.perOutputToken(Duration.ofNanos(500_000))
						.outputShare(0.2, 0.9)
						.seed(seed))
					.start();
				simulators.put(dialect, simulator);
				simulator.faults().rateLimitWait(Duration.ofMillis(20));
				String entry = "llm.quota.providers." + dialect.dialect() + ".";
				properties
					.addAll(List.of(entry + "base-url=" + simulator.baseUrl(), entry + "dialect=" + dialect.dialect(),
							entry + "add-stream-usage=true", entry + "models.default.requests-per-minute=10000000",
							entry + "models.default.tokens-per-minute=10000000000",
							entry + "models.default.input-tokens-per-minute=10000000000",
							entry + "models.default.output-tokens-per-minute=10000000000",
							entry + "models." + TIGHT + ".requests-per-minute=1",
							entry + "models." + TIGHT + ".tokens-per-minute=10000000000",
							entry + "models." + TIGHT + ".input-tokens-per-minute=10000000000",
							entry + "models." + TIGHT + ".output-tokens-per-minute=10000000000"));
			}
			app = GovernedApp.startWith(Recording.class, properties.toArray(String[]::new));
			Calls calls = new Calls(app);
			List<Sent> sent = new ArrayList<>();
			for (DialectCase dialect : DialectCase.values()) {
				// the one request a minute of each tight pool is spent first,
				// by a client without a read timeout: the first call of each
				// simulator also warms it up
				sent.add(calls.send(simulators.get(dialect), dialect, Shape.CHAT, Client.OK_HTTP_UNHURRIED, TIGHT, 20));
			}
			for (int i = 0; i < CALLS; i++) {
				DialectCase dialect = DialectCase.values()[random.nextInt(DialectCase.values().length)];
				List<Shape> shapes = shapes(dialect);
				Shape shape = shapes.get(random.nextInt(shapes.size()));
				Client client = Client.values()[random.nextInt(3)];
				int maxTokens = 20 + random.nextInt(130);
				sent.add(calls.send(simulators.get(dialect), dialect, shape, client,
						(shape == Shape.ADMISSION_TIMEOUT) ? TIGHT : MODEL, maxTokens));
			}
			QuotaEngine engine = app.engine();
			await().atMost(PATIENCE).untilAsserted(() -> {
				for (DialectCase dialect : DialectCase.values()) {
					int expected = sent.stream()
						.filter((call) -> call.dialect() == dialect)
						.mapToInt(Sent::requests)
						.sum();
					assertThat(simulators.get(dialect).requestLog().size()).as("requests %s saw", dialect)
						.isEqualTo(expected);
				}
				for (Account account : engine.accounts()) {
					assertThat(engine.inFlight(account)).as("permits in use").isZero();
				}
			});
			RecordingStore store = app.context().getBean(RecordingStore.class);
			for (DialectCase dialect : DialectCase.values()) {
				assertBooksHoldTheBill(engine, store, dialect, simulators.get(dialect).requestLog().records(),
						sent.stream().filter((call) -> call.dialect() == dialect).toList(), seed);
			}
		}
		finally {
			if (app != null) {
				app.close();
			}
			simulators.values().forEach(ProviderSimulator::close);
		}
	}

	private static List<Shape> shapes(DialectCase dialect) {
		// the common shapes three times as often; a read timeout costs its
		// client a second
		List<Shape> shapes = new ArrayList<>(List.of(Shape.CHAT, Shape.CHAT, Shape.CHAT, Shape.STREAM, Shape.STREAM,
				Shape.STREAM, Shape.REFUSED, Shape.CANCELLED, Shape.READ_TIMEOUT, Shape.ADMISSION_TIMEOUT));
		if (dialect != DialectCase.ANTHROPIC) {
			shapes.add(Shape.EMBEDDINGS);
		}
		if (dialect == DialectCase.BEDROCK) {
			shapes.add(Shape.BEDROCK_STREAM);
		}
		if (dialect == DialectCase.OPENAI) {
			shapes.add(Shape.RESPONSES_STREAM);
		}
		return shapes;
	}

	private static void assertBooksHoldTheBill(QuotaEngine engine, RecordingStore store, DialectCase dialect,
			List<RequestRecord> records, List<Sent> sent, long seed) {
		Set<String> models = new TreeSet<>();
		sent.forEach((call) -> models.add(call.model()));
		for (String model : models) {
			Pool pool = engine.pool(dialect.dialect(), model);
			List<RequestRecord> billed = records.stream()
				.filter((record) -> model.equals(record.model()))
				.filter((record) -> record.outcome() == RequestRecord.Outcome.COMPLETED
						|| record.outcome() == RequestRecord.Outcome.DROPPED)
				.toList();
			// OpenAI counts a refused request against the per-minute limit; the others
			// do not say they do, and neither llm-quota nor the simulator counts it there
			long refused = records.stream()
				.filter((record) -> model.equals(record.model()))
				.filter((record) -> record.outcome() == RequestRecord.Outcome.REFUSED)
				.count();
			long requests = billed.size() + ((dialect == DialectCase.OPENAI) ? refused : 0);
			long input = billed.stream().mapToLong(RequestRecord::inputTokens).sum();
			long output = billed.stream().mapToLong(RequestRecord::outputTokens).sum();
			// What llm-quota could not see: a call whose client left (a read timeout, a
			// cancelled stream) or whose answer carries no count (Gemini's embeddings).
			// Its output stays reserved up to its ceiling; its input is an estimate,
			// corrected by the drift observed so far, which may err either way.
			List<Sent> unreported = sent.stream()
				.filter((call) -> call.model().equals(model) && call.unreported())
				.toList();
			long largestInput = billed.stream().mapToLong(RequestRecord::inputTokens).max().orElse(0);
			long outputAllowance = unreported.stream().mapToLong(Sent::maxTokens).sum();
			long inputDrift = unreported.size() * (10 + largestInput / 2);
			for (Dimension dimension : DIMENSIONS) {
				BucketSpec bucket = pool.bucket(dimension);
				assertThat(bucket).as("%s %s %s bucket", dialect, model, dimension).isNotNull();
				long charged = store.net(bucket);
				boolean requestsOnly = dimension == Dimension.REQUESTS_PER_MINUTE;
				long bill = requestsOnly ? requests
						: (dimension.countsInput() ? input : 0) + (dimension.countsOutput() ? output : 0);
				long drift = (!requestsOnly && dimension.countsInput()) ? inputDrift : 0;
				long allowance = (!requestsOnly && dimension.countsOutput()) ? outputAllowance : 0;
				String where = dialect + " " + model + " " + dimension + " (seed " + seed + ")";
				assertThat(charged).as("charged on %s, never below the bill but for the input drift", where)
					.isGreaterThanOrEqualTo(bill - drift);
				assertThat(charged).as("charged on %s, within what llm-quota could not see", where)
					.isLessThanOrEqualTo(bill + allowance + drift);
			}
		}
	}

	/** Sends each shape through each client, as an application would. */
	private static final class Calls {

		private final WebClient web;

		private final RestClient rest;

		private final OkHttpClient okHttp;

		private final OkHttpClient unhurried;

		private Sent last;

		Calls(GovernedApp app) {
			this.web = app.webClient();
			this.rest = app.restClient();
			this.okHttp = new OkHttpClient.Builder()
				.addInterceptor(app.context().getBean(LlmQuotaOkHttpInterceptor.class))
				.readTimeout(READ_TIMEOUT)
				.build();
			this.unhurried = this.okHttp.newBuilder().readTimeout(PATIENCE).build();
		}

		Sent send(ProviderSimulator simulator, DialectCase dialect, Shape shape, Client client, String model,
				int maxTokens) {
			boolean stream = switch (shape) {
				case STREAM, BEDROCK_STREAM, RESPONSES_STREAM, CANCELLED -> true;
				case REFUSED -> dialect == DialectCase.OPENAI && maxTokens % 2 == 0;
				default -> false;
			};
			String embedModel = "test-embed-model";
			String path;
			Map<String, Object> body;
			String actualModel = model;
			if (shape == Shape.EMBEDDINGS) {
				actualModel = embedModel;
				path = embeddingsPath(dialect, embedModel);
				body = embeddingsBody(dialect, embedModel);
			}
			else if (shape == Shape.RESPONSES_STREAM || (shape == Shape.REFUSED && stream)) {
				path = "/v1/responses";
				body = Map.of("model", model, "input", "Tell a story.", "max_output_tokens", maxTokens, "stream", true);
			}
			else if (shape == Shape.BEDROCK_STREAM) {
				path = "/model/" + model + "/invoke-with-response-stream";
				body = Map.of("anthropic_version", "bedrock-2023-05-31", "max_tokens", maxTokens, "messages",
						List.of(Map.of("role", "user", "content", "Tell a story.")));
			}
			else if (dialect == DialectCase.BEDROCK && stream) {
				path = "/model/" + URLEncoder.encode(model, StandardCharsets.UTF_8) + "/converse-stream";
				body = dialect.body(model, maxTokens, true, "Tell a story.");
			}
			else {
				path = dialect.path(model, stream);
				body = dialect.body(model, maxTokens, stream, "Tell a story.");
			}
			if (shape == Shape.REFUSED) {
				simulator.faults().next(Fault.RATE_LIMITED);
			}
			if (shape == Shape.READ_TIMEOUT) {
				simulator.faults().next(Fault.DELAY_HEADERS);
			}
			String url = simulator.baseUrl() + path;
			boolean cancel = shape == Shape.CANCELLED;
			Duration maxWait = (shape == Shape.ADMISSION_TIMEOUT) ? Duration.ofMillis(50) : null;
			boolean ok;
			try {
				switch (client) {
					case WEB_CLIENT -> web(url, body, stream, cancel, shape == Shape.READ_TIMEOUT, maxWait);
					case REST_CLIENT -> rest(url, body, cancel, maxWait);
					case OK_HTTP -> okHttp(this.okHttp, url, body, cancel, maxWait);
					case OK_HTTP_UNHURRIED -> okHttp(this.unhurried, url, body, cancel, maxWait);
				}
				ok = true;
			}
			catch (Exception ex) {
				if (shape != Shape.READ_TIMEOUT && shape != Shape.ADMISSION_TIMEOUT) {
					fail("A " + shape + " call to " + dialect + " through " + client + " failed, after " + this.last,
							ex);
				}
				ok = false;
			}
			int requests = switch (shape) {
				case REFUSED -> 2;
				case ADMISSION_TIMEOUT -> ok ? 1 : 0;
				default -> 1;
			};
			// a client that left (a read timeout, a cancel) saw no final usage; Gemini's
			// embeddings carry none
			boolean unreported = shape == Shape.READ_TIMEOUT || shape == Shape.CANCELLED
					|| (shape == Shape.EMBEDDINGS && dialect == DialectCase.GEMINI);
			Sent call = new Sent(dialect, shape, client, actualModel, (shape == Shape.EMBEDDINGS) ? 0 : maxTokens,
					unreported, requests);
			this.last = call;
			return call;
		}

		private void web(String url, Map<String, Object> body, boolean stream, boolean cancel, boolean timeout,
				Duration maxWait) {
			WebClient.RequestBodySpec spec = this.web.post().uri(url).contentType(MediaType.APPLICATION_JSON);
			if (maxWait != null) {
				spec = spec.attribute(LlmQuota.MAX_WAIT, maxWait);
			}
			if (timeout) {
				// a read timeout: counted from when the request was sent, as a
				// real one is
				spec = spec.httpRequest(
						(request) -> request.<HttpClientRequest>getNativeRequest().responseTimeout(READ_TIMEOUT));
			}
			WebClient.ResponseSpec response = spec.bodyValue(body).retrieve();
			if (timeout) {
				response.bodyToMono(byte[].class).block(PATIENCE);
			}
			else if (cancel) {
				response.bodyToFlux(DataBuffer.class).take(2).doOnNext(DataBufferUtils::release).blockLast(PATIENCE);
			}
			else if (stream) {
				response.bodyToFlux(DataBuffer.class).doOnNext(DataBufferUtils::release).blockLast(PATIENCE);
			}
			else {
				response.bodyToMono(byte[].class).block(PATIENCE);
			}
		}

		private void rest(String url, Map<String, Object> body, boolean cancel, Duration maxWait) {
			RestClient.RequestBodySpec spec = this.rest.post().uri(url).contentType(MediaType.APPLICATION_JSON);
			if (maxWait != null) {
				spec = spec.attribute(LlmQuota.MAX_WAIT, maxWait);
			}
			spec.body(body).exchange((request, response) -> {
				try (InputStream in = response.getBody()) {
					if (response.getStatusCode().isError()) {
						throw new IllegalStateException("status " + response.getStatusCode());
					}
					if (cancel) {
						in.read(new byte[64]);
					}
					else {
						in.readAllBytes();
					}
				}
				return null;
			});
		}

		private static void okHttp(OkHttpClient client, String url, Map<String, Object> body, boolean cancel,
				Duration maxWait) throws Exception {
			Request request = new Request.Builder().url(url)
				.post(RequestBody.create(JsonMapper.shared().writeValueAsBytes(body),
						okhttp3.MediaType.get("application/json")))
				.build();
			Exception[] failure = new Exception[1];
			Runnable call = () -> {
				try (Response response = client.newCall(request).execute()) {
					if (!response.isSuccessful()) {
						throw new IllegalStateException("status " + response.code());
					}
					if (cancel) {
						response.body().source().read(new okio.Buffer(), 64);
					}
					else {
						response.body().bytes();
					}
				}
				catch (Exception ex) {
					failure[0] = ex;
				}
			};
			if (maxWait != null) {
				LlmQuota.with(LlmQuota.MAX_WAIT, maxWait).run(call);
			}
			else {
				call.run();
			}
			if (failure[0] != null) {
				throw failure[0];
			}
		}

		private static String embeddingsPath(DialectCase dialect, String model) {
			return switch (dialect) {
				case OPENAI -> "/v1/embeddings";
				case AZURE_OPENAI -> "/openai/deployments/" + model + "/embeddings?api-version=2024-10-21";
				case BEDROCK -> "/model/" + model + "/invoke";
				case GEMINI -> "/v1beta/models/" + model + ":embedContent";
				case OLLAMA -> "/api/embed";
				case ANTHROPIC -> throw new IllegalArgumentException("Anthropic has no embeddings");
			};
		}

		private static Map<String, Object> embeddingsBody(DialectCase dialect, String model) {
			String text = "The quarterly report, in one vector.";
			Map<String, Object> body = new LinkedHashMap<>();
			switch (dialect) {
				case OPENAI, OLLAMA -> {
					body.put("model", model);
					body.put("input", text);
				}
				case AZURE_OPENAI -> body.put("input", text);
				case BEDROCK -> body.put("inputText", text);
				case GEMINI -> body.put("content", Map.of("parts", List.of(Map.of("text", text))));
				case ANTHROPIC -> throw new IllegalArgumentException("Anthropic has no embeddings");
			}
			return body;
		}

	}

}
