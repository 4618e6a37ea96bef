package dev.llmquota.provider;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.core.JacksonException;
import tools.jackson.core.json.JsonWriteFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The answer's scanner against Jackson: random documents, some broken by a byte cut,
 * added, dropped or changed, fed in random pieces (heap, offset and direct buffers), read
 * for random fields. What Jackson reads whole, the scanner keeps the same; what Jackson
 * refuses, the scanner reads as unreadable.
 */
class JsonAnswerReaderTests {

	private static final JsonMapper ascii = JsonMapper.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();

	private static final JsonNodeFactory nodes = JsonNodeFactory.instance;

	/** What a mutation adds: the grammar's bytes, and some others. */
	private static final byte[] palette = "{}[],:\"\\ \t\n0123456789eE.-+tfnulrsabxyz/#'\u0001"
		.getBytes(StandardCharsets.US_ASCII);

	@ParameterizedTest
	@MethodSource("dev.llmquota.core.Seeds#seeds")
	void keepsWhatJacksonReadsAndRefusesWhatItRefuses(long seed) {
		SplittableRandom random = new SplittableRandom(seed);
		for (int document = 0; document < 20; document++) {
			JsonNode tree = random.nextInt(6) == 0 ? array(random, 0) : object(random, 0, true);
			byte[] bytes = ascii.writeValueAsBytes(tree);
			int mutations = random.nextInt(3) == 0 ? 0 : random.nextInt(1, 3);
			for (int i = 0; i < mutations; i++) {
				bytes = mutated(bytes, random);
			}
			Set<String> fields = switch (random.nextInt(4)) {
				case 0 -> null;
				case 1 -> Set.of("usage");
				case 2 -> Set.of("usage", "candidates", "usageMetadata");
				default -> Set.of("k" + random.nextInt(3), "k" + random.nextInt(3, 6));
			};
			String at = "seed " + seed + " document " + document + " fields " + fields + ": "
					+ new String(bytes, StandardCharsets.UTF_8);
			assertReadAsJacksonReadsIt(bytes, fields, random, at);
		}
	}

	/** The grammar's edges, each read as Jackson reads it. */
	@ParameterizedTest
	@ValueSource(strings = { "", " ", "{}", "[]", "[,]", "{,}", "[1,]", "{\"a\":1,}", "{\"a\":1,,\"b\":2}", "[1 2]",
			"{\"a\" 1}", "{1:2}", "{\"a\":}", "{\"a\":1}{}", "{\"a\":1} x", "{\"a\":1}  ", "\"abc\"", "123", "123 ",
			"-0", "-", "01", "1.", ".5", "+1", "1e", "1e5", "1E+5", "0.0e-0", "-12.5E-3", "NaN", "tru", "true", "nul",
			"null", "falsey", "{\"a\":tru}", "{\"a\":[1,{\"b\":null}],\"c\":\"x\"}", "[1,[2,[3]]]", "[1,[2,[3]]",
			"[1]]", "{\"a\":[}", "{\"a\":{]}", "// c\n{}", "{'a':1}", "{\"a\":\"\u0001\"}", "{\"a\":\"\\x\"}",
			"{\"a\":\"\\u12\"}", "{\"a\":\"\\u12g4\"}", "{\"a\":\"\\u00e9\\n\\/\"}", "{\"a\":1,\"a\":2}",
			"{\"\\u0061\":5}", "[\"a\",\"b\"]", "{\"a\":1}\u0000", "\t\r\n{\"a\":1}\n", "{\"a\":2147483647}",
			"{\"a\":2147483648}", "{\"a\":-2147483649}", "{\"a\":9223372036854775807}", "{\"a\":9223372036854775808}",
			"{\"a\":-9223372036854775809}", "{\"a\":123456789012345678901234567890}", "{\"a\":1e400}", "{\"a\":-0.0}",
			"{\"a\":[-0,0.5e-3,1E2]}" })
	void readsTheGrammarsEdgesAsJacksonDoes(String document) {
		byte[] bytes = document.getBytes(StandardCharsets.UTF_8);
		for (Set<String> fields : Arrays.asList(null, Set.of("a"))) {
			assertReadAsJacksonReadsIt(bytes, fields, new SplittableRandom(bytes.length), document);
		}
	}

	/**
	 * Feeds a document in random pieces: what Jackson reads whole, the reader keeps the
	 * same; what Jackson refuses, the reader finds unreadable.
	 */
	private static void assertReadAsJacksonReadsIt(byte[] bytes, Set<String> fields, SplittableRandom random,
			String description) {
		JsonAnswerReader reader = new JsonAnswerReader(fields);
		feedInPieces(reader, bytes, random);
		JsonNode whole;
		try {
			whole = JsonTrees.read(bytes, 0, bytes.length);
		}
		catch (JacksonException ex) {
			assertThatExceptionOfType(JsonAnswerReader.Unreadable.class).as(description).isThrownBy(reader::finish);
			return;
		}
		assertThat(reader.finish()).as(description).isEqualTo(kept(whole, fields));
	}

	@Test
	void readsAnAnswerWithTextInAnyScriptAndKeysWithEscapes() {
		String answer = "\uFEFF{\"choices\":[{\"message\":{\"content\":\"d\u00e9j\u00e0 \u4f60\u597d \ud83d\ude00 \\\" \\u00e9\"}}],"
				+ "\"us\\u0061ge\":{\"prompt_tokens\":12,\"completion_tokens\":1},\"usage_x\":3}";
		JsonAnswerReader reader = new JsonAnswerReader(Set.of("usage"));
		feedInPieces(reader, answer.getBytes(StandardCharsets.UTF_8), new SplittableRandom(1));
		byte[] usage = "{\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":1}}".getBytes(StandardCharsets.UTF_8);
		assertThat(reader.finish()).isEqualTo(JsonTrees.read(usage, 0, usage.length));
	}

	@Test
	void readsAnAnswerLargerThanOnePieceOfADirectBuffer() {
		String answer = "{\"choices\":[{\"message\":{\"content\":\"" + "word ".repeat(400)
				+ "\"}}],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":400}}";
		byte[] bytes = answer.getBytes(StandardCharsets.UTF_8);
		JsonAnswerReader reader = new JsonAnswerReader(Set.of("usage"));
		reader.feed(ByteBuffer.allocateDirect(bytes.length).put(bytes).flip());
		assertThat(reader.finish()).isEqualTo(kept(JsonTrees.read(bytes, 0, bytes.length), Set.of("usage")));
	}

	@Test
	void anAnswerNestedDeeperThanJacksonAllowsIsUnreadable() {
		JsonAnswerReader reader = new JsonAnswerReader(Set.of("usage"));
		String deep = "[".repeat(501) + "]".repeat(501);
		reader.feed(ByteBuffer.wrap(deep.getBytes(StandardCharsets.US_ASCII)));
		assertThatExceptionOfType(JsonAnswerReader.Unreadable.class).isThrownBy(reader::finish);
		JsonAnswerReader allowed = new JsonAnswerReader(Set.of("usage"));
		allowed.feed(ByteBuffer.wrap(("[".repeat(500) + "]".repeat(500)).getBytes(StandardCharsets.US_ASCII)));
		assertThat(allowed.finish()).isNotNull();
	}

	private static JsonNode kept(JsonNode whole, Set<String> fields) {
		if (whole == null || !whole.isContainer()) {
			return null;
		}
		if (whole.isArray()) {
			return whole;
		}
		ObjectNode kept = nodes.objectNode();
		whole.properties().forEach((field) -> {
			if (fields == null || fields.contains(field.getKey())) {
				kept.set(field.getKey(), field.getValue());
			}
		});
		return kept;
	}

	private static void feedInPieces(JsonAnswerReader reader, byte[] bytes, SplittableRandom random) {
		int at = 0;
		while (at < bytes.length) {
			int length = Math.min(bytes.length - at, 1 + random.nextInt(24));
			ByteBuffer piece = switch (random.nextInt(3)) {
				case 0 -> ByteBuffer.wrap(bytes, at, length).slice();
				case 1 -> {
					byte[] padded = new byte[length + 7];
					System.arraycopy(bytes, at, padded, 3, length);
					yield ByteBuffer.wrap(padded, 3, length).slice();
				}
				default -> ByteBuffer.allocateDirect(length).put(bytes, at, length).flip();
			};
			reader.feed(piece);
			assertThat(piece.remaining()).as("the buffer is read, not consumed").isEqualTo(length);
			at += length;
		}
	}

	private static byte[] mutated(byte[] bytes, SplittableRandom random) {
		int at = random.nextInt(bytes.length + 1);
		byte added = palette[random.nextInt(palette.length)];
		return switch (random.nextInt(4)) {
			case 0 -> Arrays.copyOf(bytes, at);
			case 1 -> {
				byte[] longer = new byte[bytes.length + 1];
				System.arraycopy(bytes, 0, longer, 0, at);
				longer[at] = added;
				System.arraycopy(bytes, at, longer, at + 1, bytes.length - at);
				yield longer;
			}
			case 2 -> {
				if (at == bytes.length) {
					yield bytes;
				}
				byte[] shorter = new byte[bytes.length - 1];
				System.arraycopy(bytes, 0, shorter, 0, at);
				System.arraycopy(bytes, at + 1, shorter, at, bytes.length - at - 1);
				yield shorter;
			}
			default -> {
				byte[] changed = bytes.clone();
				if (at < changed.length) {
					changed[at] = added;
				}
				yield changed;
			}
		};
	}

	private static ObjectNode object(SplittableRandom random, int depth, boolean top) {
		ObjectNode object = nodes.objectNode();
		int fields = random.nextInt(top ? 2 : 0, 6);
		for (int i = 0; i < fields; i++) {
			String name = top && random.nextInt(3) == 0
					? List.of("usage", "candidates", "usageMetadata").get(random.nextInt(3))
					: "k" + random.nextInt(6) + (random.nextInt(8) == 0 ? "\u00e9\"\\" : "");
			object.set(name, value(random, depth + 1));
		}
		return object;
	}

	private static ArrayNode array(SplittableRandom random, int depth) {
		ArrayNode array = nodes.arrayNode();
		int elements = random.nextInt(0, 5);
		for (int i = 0; i < elements; i++) {
			array.add(value(random, depth + 1));
		}
		return array;
	}

	private static JsonNode value(SplittableRandom random, int depth) {
		int kind = random.nextInt(depth > 4 ? 6 : 8);
		return switch (kind) {
			case 0 -> nodes.numberNode(random.nextInt(-1000, 100_000));
			case 1 -> nodes.numberNode(random.nextLong());
			case 2 -> nodes.numberNode(random.nextDouble() * Math.pow(10, random.nextInt(-5, 30)));
			case 3 -> nodes.stringNode(text(random));
			case 4 -> random.nextBoolean() ? nodes.booleanNode(random.nextBoolean()) : nodes.nullNode();
			case 5 -> nodes.stringNode("");
			case 6 -> object(random, depth, false);
			default -> array(random, depth);
		};
	}

	private static String text(SplittableRandom random) {
		String[] parts = { "ok", " ", "\"", "\\", "/", "\n", "\t", "\u0001", "\u00e9", "\u4f60", "\ud83d\ude00", "{",
				"]", ":", ",", "usage" };
		StringBuilder text = new StringBuilder();
		int length = random.nextInt(0, 8);
		for (int i = 0; i < length; i++) {
			text.append(parts[random.nextInt(parts.length)]);
		}
		return text.toString();
	}

}
