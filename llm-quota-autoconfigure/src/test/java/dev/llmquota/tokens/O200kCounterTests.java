package dev.llmquota.tokens;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.IntPredicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingType;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code o200k_base} count made without a regular expression is jtokkit's count, for
 * every kind of text: each character class of the pattern, the alternatives' edges
 * (prefixes, contractions, digits in threes, line ends, trailing spaces), lone
 * surrogates, pieces long enough to merge many parts, and random mixtures of all of them.
 * The pieces are the pattern's own, matched by Java's regular expressions as jtokkit
 * matches them.
 */
class O200kCounterTests {

	private static final Encoding JTOKKIT = Encodings.newLazyEncodingRegistry().getEncoding(EncodingType.O200K_BASE);

	private static final O200kCounter COUNTER = O200kCounter.get();

	/** The pattern jtokkit 1.1 splits o200k_base text with, as it compiles it. */
	private static final Pattern PATTERN = Pattern.compile(String.join("|",
			"[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
			"[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
			"\\p{N}{1,3}", " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*", "\\s*[\\r\\n]+", "\\s+(?!\\S)", "\\s+"),
			Pattern.UNICODE_CHARACTER_CLASS);

	/** Splits as the pattern does, and counts as jtokkit does. */
	private static void assertCountsAsJtokkit(String text) {
		List<Integer> expected = new ArrayList<>();
		for (Matcher matcher = PATTERN.matcher(text); matcher.find();) {
			expected.add(matcher.end());
		}
		List<Integer> ends = new ArrayList<>();
		for (int start = 0; start < text.length(); start = ends.get(ends.size() - 1)) {
			ends.add(O200kCounter.pieceEnd(text, start, text.length()));
		}
		assertThat(ends).as(() -> "pieces of " + describe(text)).isEqualTo(expected);
		assertThat(COUNTER.count(text)).as(() -> "tokens of " + describe(text))
			.isEqualTo(JTOKKIT.countTokensOrdinary(text));
	}

	private static String describe(String text) {
		StringBuilder out = new StringBuilder();
		text.codePoints().limit(80).forEach((c) -> out.append(String.format("U+%04X ", c)));
		return out.toString();
	}

	@Test
	void everyClassIsThePatternsClassForEveryCodePoint() {
		assertSameClass("[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]", O200kCounter::isUpperish);
		assertSameClass("[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]", O200kCounter::isLowerish);
		assertSameClass("\\p{N}", O200kCounter::isNumber);
		assertSameClass("\\s", O200kCounter::isWhitespace);
		assertSameClass("[^\\r\\n\\p{L}\\p{N}]", O200kCounter::isPrefix);
		assertSameClass("[^\\s\\p{L}\\p{N}]", O200kCounter::isPunctuation);
	}

	/**
	 * Every code point, in order, as one text; the surrogates apart (a high one followed
	 * by a low one would be read as a pair).
	 */
	private static void assertSameClass(String regex, IntPredicate predicate) {
		StringBuilder all = new StringBuilder();
		for (int c = 0; c <= Character.MAX_CODE_POINT; c++) {
			if (!(c >= Character.MIN_SURROGATE && c <= Character.MAX_SURROGATE)) {
				all.appendCodePoint(c);
			}
		}
		Pattern pattern = Pattern.compile(regex, Pattern.UNICODE_CHARACTER_CLASS);
		boolean[] matched = new boolean[Character.MAX_CODE_POINT + 1];
		for (Matcher matcher = pattern.matcher(all); matcher.find();) {
			matched[all.codePointAt(matcher.start())] = true;
		}
		Matcher single = pattern.matcher("");
		for (int c = Character.MIN_SURROGATE; c <= Character.MAX_SURROGATE; c++) {
			matched[c] = single.reset(String.valueOf((char) c)).matches();
		}
		List<String> differ = new ArrayList<>();
		for (int c = 0; c <= Character.MAX_CODE_POINT && differ.size() < 10; c++) {
			if (predicate.test(c) != matched[c]) {
				differ.add(String.format("U+%04X", c));
			}
		}
		assertThat(differ).as("code points %s classes otherwise", regex).isEmpty();
	}

	@Test
	void countsTheAlternativesEdgesAsJtokkit() {
		List<String> texts = List.of("", "a", " ", "\n", "Hello, world!", "  hello", "\thello", "\nhello",
				"HELLO world", "HelloWorld", "helloWORLD", "iPhone", "don't", "DON'T", "they're", "we've", "I'M",
				"you'll", "he'd", "it's", "it\u017Fs", "it'\u017F", "'s", "' s", "''s", "x'", "x''", "x'l", "x'lL",
				"12345678", " 1234", "a1b22c333d4444", "\u00BD\u00B2\u2167 x", "3.14159", "1,000,000", "end.\n\nNext",
				"a\r\nb", "a \r\n  \r\n b", "trailing   ", "   leading", "a  b   c    d", "x\u00A0y", "x\u2003\u3000y",
				"x\u0085y", "((a)) [b] {c}", "// comment\n/* block */", "path/to/file\n/next", "?!\n\n", " ?!",
				"--\r\n/", "caf\u00E9 na\u0131ve \u00C9COLE", "e\u0301te\u0301", "\u0301start", " \u0301",
				"\u01C5ungla", "\u01C5\u01C5", "\u02B0ello", "\u02B0\u02B0", "A\u02B0", "\u02B0A.", "\u6771\u4EACA.",
				"e\u0301A!", "\u6771A\u4EACB c", "\u0903\u0915", "\u20DDx", "\u6771\u4EAC\u306F\u6674\u308C\u3002",
				"\u0645\u0631\u062D\u0628\u0627 \u0628\u0643", "\uD83D\uDE00\uD83D\uDE00 smile", "\uD83D lone",
				"lone \uDE00", "\uDE00\uD83D", "x\u0000\u0001\u007F\u001Fy", "\uFEFFbom", "snake_case_name",
				"camelCaseName", "SCREAMING_CASE", "e-mail@example.com", "https://example.com/a?b=c&d=e",
				"<tag attr=\"v\">text</tag>", "{\"key\": [1, 2, 3]}", "    def f(x):\n        return x * 2  # twice\n",
				"\u0130stanbul \u0131", "\u1E9E\u00DF");
		for (String text : texts) {
			assertCountsAsJtokkit(text);
		}
	}

	@Test
	void countsLongPiecesAsJtokkit() {
		assertCountsAsJtokkit("\u6771\u4EAC\u306F\u6674\u308C\u3067\u3059".repeat(300));
		assertCountsAsJtokkit(" ".repeat(5000) + "x");
		assertCountsAsJtokkit("\n".repeat(700) + " ".repeat(700));
		assertCountsAsJtokkit("=-".repeat(2000));
		assertCountsAsJtokkit("a".repeat(3000));
		assertCountsAsJtokkit("supercalifragilisticexpialidocious".repeat(100));
		assertCountsAsJtokkit("\uD83D\uDE00".repeat(500));
		StringBuilder base64 = new StringBuilder();
		Random random = new Random(7);
		String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz+/";
		for (int i = 0; i < 20_000; i++) {
			base64.append(alphabet.charAt(random.nextInt(alphabet.length())));
		}
		assertCountsAsJtokkit(base64.toString());
	}

	@Test
	void countsEveryCodePointAsJtokkit() {
		StringBuilder text = new StringBuilder();
		for (int c = 0; c <= Character.MAX_CODE_POINT; c++) {
			text.appendCodePoint(c);
			if (c % 61 == 0) {
				text.append((c % 2 == 0) ? " x" : "'s ");
			}
			if (text.length() >= 4000) {
				assertCountsAsJtokkit(text.toString());
				text.setLength(0);
			}
		}
		assertCountsAsJtokkit(text.toString());
	}

	@Test
	void countsRandomMixturesAsJtokkit() {
		String[] pool = { "a", "z", "e", "s", "t", "l", "v", "r", "m", "d", "A", "S", "L", "E", "0", "7", "9", " ",
				"  ", "\t", "\r", "\n", "\r\n", "/", "'", "'", ".", ",", "!", "-", "_", "(", "\"", "#", "\u017F",
				"\u00E9", "\u00C9", "\u01C5", "\u02B0", "\u0301", "\u0903", "\u20DD", "\u00BD", "\u2167", "\u0661",
				"\u00A0", "\u2003", "\u3000", "\u0085", "\u2028", "\u6771", "\u306F", "\u0645", "\uD83D\uDE00",
				"\uD835\uDC00", "\uD83D", "\uDE00", "\u0000", "\u007F", "\u00AD", "\uFEFF", "\u0130", "\u00DF",
				"\u03A3", "\u03C2" };
		Random random = new Random(20261203);
		for (int i = 0; i < 15_000; i++) {
			StringBuilder text = new StringBuilder();
			int length = 1 + random.nextInt(40);
			for (int j = 0; j < length; j++) {
				text.append(pool[random.nextInt(pool.length)]);
			}
			assertCountsAsJtokkit(text.toString());
		}
	}

	@Test
	void countsProseAndCodeAsJtokkit() {
		String prose = "The quick brown fox jumps over the lazy dog's back; then it's 2026-12-03: 1,234 tokens. "
				+ "Don't we'll they've I'm? R\u00E9sum\u00E9 na\u00EFve caf\u00E9 \u2014 \u6771\u4EAC\u306F\u6674\u308C\u3002\n\n"
				+ "  def f(x):\n      return x*2  # comment\n\tSELECT * FROM t WHERE id = 42;\r\n";
		assertCountsAsJtokkit(prose.repeat(200));
	}

}
