package dev.llmquota.provider;

import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import dev.llmquota.core.Usage;
import dev.llmquota.test.fixtures.RecordedFixture;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * A provider that lies, or a proxy that mangles: every recorded answer, request and
 * stream event with its values swapped at random for values of other types and sizes,
 * read by every dialect. Nothing a dialect reads may throw, and what it reports is either
 * nothing or counts a call can have used. A seed replays alone with
 * {@code -Dllmquota.seed=N}.
 */
class MutatedAnswersTests {

	private static final JsonMapper mapper = JsonMapper.shared();

	private static final List<JsonNode> documents = documents();

	/** Values no provider should send where a count, a text or an object belongs. */
	private static final List<String> values = List.of("null", "-1", "0", "-0.0", "1.5", "1e30", "1e400",
			"9223372036854775807", "9223372036854775808", "-9223372036854775808", "123456789012345678901234567890",
			"\"12\"", "\"\"", "\"[DONE]\"", "true", "[]", "{}", "[1,2]", "{\"type\":null}", "{\"usage\":7}",
			"[{\"text\":5}]");

	@ParameterizedTest
	@MethodSource("dev.llmquota.core.Seeds#seeds")
	void everyDialectReadsAMutatedDocumentWithoutThrowingOrReportingWhatNoCallUses(long seed) {
		Random random = new Random(seed);
		JsonNode document = mutated(documents.get(random.nextInt(documents.size())), random);
		Instant now = Instant.parse("2026-12-02T12:00:00Z");
		URI uri = URI.create("https://provider.test/v1/models/m:streamGenerateContent");
		for (DialectId id : DialectId.values()) {
			Dialect dialect = Dialect.of(id);
			UsageAccumulator usage = new UsageAccumulator();
			assertThatNoException().as("%s reading %s (seed %d)", id, document, seed).isThrownBy(() -> {
				dialect.model(uri, document);
				dialect.outputCeiling(document);
				dialect.choices(document);
				dialect.inputText(document);
				dialect.generates(uri, document);
				dialect.streaming(uri, document);
				dialect.readBody(document, usage);
				dialect.readEvent(document, usage);
				dialect.preamble(document);
				dialect.refusal(document, now);
				dialect.classify(429, (name) -> null, document, now);
				ParsedRequest.read(mapper.writeValueAsBytes(document), dialect);
			});
			assertReportable(usage, id, document, seed);
			ResponseReader reader = new ResponseReader(dialect, Framing.SSE);
			reader.feed(ByteBuffer.wrap(("data: " + document + "\n\n").getBytes(StandardCharsets.UTF_8)));
			reader.finish();
			assertReportable(reader.usage(), id, document, seed);
		}
	}

	private static void assertReportable(UsageAccumulator usage, DialectId id, JsonNode document, long seed) {
		for (boolean generates : new boolean[] { true, false }) {
			Usage reported = usage.usage(10, generates);
			if (reported != null) {
				assertThat(List.of(reported.inputTokens(), reported.outputTokens()))
					.as("%s reading %s (seed %d)", id, document, seed)
					.allSatisfy((count) -> assertThat(count).isBetween(0L, UsageAccumulator.MOST_TOKENS));
			}
		}
	}

	/** A copy with one to four values swapped, each at a node picked at random. */
	private static JsonNode mutated(JsonNode document, Random random) {
		JsonNode copy = document.deepCopy();
		int swaps = 1 + random.nextInt(4);
		for (int i = 0; i < swaps; i++) {
			List<JsonNode> containers = new ArrayList<>();
			collect(copy, containers);
			JsonNode container = containers.get(random.nextInt(containers.size()));
			JsonNode value = mapper.readTree(values.get(random.nextInt(values.size())));
			if (container instanceof ObjectNode object && !object.isEmpty()) {
				List<String> names = new ArrayList<>(object.propertyNames());
				object.set(names.get(random.nextInt(names.size())), value);
			}
			else if (container instanceof ArrayNode array && !array.isEmpty()) {
				array.set(random.nextInt(array.size()), value);
			}
		}
		return copy;
	}

	private static void collect(JsonNode node, List<JsonNode> containers) {
		if (node.isContainer()) {
			containers.add(node);
			node.values().forEach((child) -> collect(child, containers));
		}
	}

	/**
	 * Every JSON document in the recorded fixtures: answers, requests, and each event of
	 * a stream.
	 */
	private static List<JsonNode> documents() {
		List<JsonNode> documents = new ArrayList<>();
		for (RecordedFixture fixture : RecordedFixture.all()) {
			Stream.concat(Stream.of(fixture.body()), fixture.request().map(RecordedFixture.Request::body).stream())
				.filter((text) -> text != null)
				.forEach((text) -> text.lines()
					.map((line) -> line.startsWith("data:") ? line.substring(5).trim() : line.trim())
					.filter((line) -> line.startsWith("{") || line.startsWith("["))
					.forEach((line) -> {
						try {
							documents.add(mapper.readTree(line));
						}
						catch (RuntimeException ex) {
							// a pretty-printed body: read whole below
						}
					}));
			try {
				documents.add(mapper.readTree(fixture.body()));
			}
			catch (RuntimeException ex) {
				// a stream: its events were read above
			}
		}
		documents.removeIf((document) -> !document.isContainer() || document.isEmpty());
		assertThat(documents).hasSizeGreaterThan(30);
		return documents;
	}

}
