package dev.llmquota.tokens;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;

/**
 * Counts the tokens of a text in OpenAI's {@code o200k_base} encoding, as jtokkit's
 * encoding of that name does, without its regular expression: the text is split by hand
 * into the pieces the encoding's pattern matches, and each piece is merged by byte-pair
 * ranks read from jtokkit's own table. jtokkit runs the pattern with
 * {@link java.util.regex.Pattern#UNICODE_CHARACTER_CLASS}, which made the count of a
 * prompt about four times as costly as its {@code cl100k_base} encoding, split by hand
 * too. The count equals jtokkit's for every text (tests compare them on texts of every
 * character class).
 * <p>
 * The pattern, whose seven alternatives are tried in order at each piece's start: <pre>
 * [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
 * [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
 * \p{N}{1,3}
 *  ?[^\s\p{L}\p{N}]+[\r\n/]*
 * \s*[\r\n]+
 * \s+(?!\S)
 * \s+
 * </pre>
 */
final class O200kCounter {

	private static final String RANKS = "/com/knuddels/jtokkit/o200k_base.tiktoken";

	private static final int NONE = Integer.MAX_VALUE;

	/** Every token's bytes, one after another in the order of {@link #starts}. */
	private final byte[] bytes;

	/** Where each token's bytes start in {@link #bytes}; one more entry marks the end. */
	private final int[] starts;

	private final int[] ranks;

	/** Open addressing: a token's index plus one, at its hash; 0 where none. */
	private final int[] slots;

	private final int mask;

	private O200kCounter(byte[] bytes, int[] starts, int[] ranks) {
		this.bytes = bytes;
		this.starts = starts;
		this.ranks = ranks;
		int tokens = ranks.length;
		int size = Integer.highestOneBit(tokens) << 2;
		this.slots = new int[size];
		this.mask = size - 1;
		for (int token = 0; token < tokens; token++) {
			int slot = hash(bytes, starts[token], starts[token + 1]) & this.mask;
			while (this.slots[slot] != 0) {
				slot = (slot + 1) & this.mask;
			}
			this.slots[slot] = token + 1;
		}
	}

	/**
	 * Returns the counter, its table read from jtokkit's resources on first use.
	 * @return the counter
	 */
	static O200kCounter get() {
		return Holder.INSTANCE;
	}

	/**
	 * Counts a text's tokens.
	 * @param text the text
	 * @return the tokens, as {@code o200k_base} encodes the text
	 */
	long count(String text) {
		int length = text.length();
		Merge merge = new Merge();
		long tokens = 0;
		for (int start = 0; start < length;) {
			int end = pieceEnd(text, start, length);
			tokens += piece(text, start, end, merge);
			start = end;
		}
		return tokens;
	}

	private int piece(String text, int start, int end, Merge merge) {
		int size = merge.utf8(text, start, end);
		byte[] piece = merge.piece;
		if (size == 1 || rank(piece, 0, size) != NONE) {
			return 1;
		}
		return merge.count(this, size);
	}

	int rank(byte[] piece, int from, int to) {
		int length = to - from;
		int slot = hash(piece, from, to) & this.mask;
		for (int entry; (entry = this.slots[slot]) != 0; slot = (slot + 1) & this.mask) {
			int token = entry - 1;
			int start = this.starts[token];
			if (this.starts[token + 1] - start == length
					&& Arrays.equals(this.bytes, start, start + length, piece, from, to)) {
				return this.ranks[token];
			}
		}
		return NONE;
	}

	private static int hash(byte[] bytes, int from, int to) {
		int hash = 0x811c9dc5;
		for (int i = from; i < to; i++) {
			hash = (hash ^ bytes[i]) * 0x01000193;
		}
		return hash ^ (hash >>> 15);
	}

	// The pattern's alternatives, in its order.

	static int pieceEnd(String text, int start, int length) {
		int end = word(text, start, length, true);
		if (end < 0) {
			end = word(text, start, length, false);
		}
		if (end < 0) {
			end = number(text, start, length);
		}
		if (end < 0) {
			end = punctuation(text, start, length);
		}
		if (end < 0) {
			end = whitespace(text, start, length);
		}
		return end;
	}

	/**
	 * The first two alternatives: an optional prefix, then a word whose case the
	 * alternative names (lower: {@code U* L+}; upper: {@code U+ L*}), then a contraction.
	 */
	private static int word(String text, int start, int length, boolean lower) {
		int first = text.codePointAt(start);
		for (int withPrefix = 1; withPrefix >= 0; withPrefix--) {
			int from = start;
			if (withPrefix == 1) {
				if (!isPrefix(first)) {
					continue;
				}
				from += Character.charCount(first);
			}
			int upperEnd = from;
			int lastLowerInUpper = -1;
			while (upperEnd < length) {
				int c = text.codePointAt(upperEnd);
				if (!isUpperish(c)) {
					break;
				}
				if (isLowerish(c)) {
					lastLowerInUpper = upperEnd;
				}
				upperEnd += Character.charCount(c);
			}
			int lowerFrom;
			if (lower) {
				// U* gives back what L+ needs: the latest place where a lower character
				// stands.
				if (upperEnd < length && isLowerish(text.codePointAt(upperEnd))) {
					lowerFrom = upperEnd;
				}
				else if (lastLowerInUpper >= 0) {
					lowerFrom = lastLowerInUpper;
				}
				else {
					continue;
				}
			}
			else {
				if (upperEnd == from) {
					continue;
				}
				lowerFrom = upperEnd;
			}
			int end = lowerFrom;
			while (end < length) {
				int c = text.codePointAt(end);
				if (!isLowerish(c)) {
					break;
				}
				end += Character.charCount(c);
			}
			return contraction(text, end, length);
		}
		return -1;
	}

	/** {@code (?i:'s|'t|'re|'ve|'m|'ll|'d)?}, case-insensitive as Unicode folds case. */
	private static int contraction(String text, int at, int length) {
		if (at + 1 >= length || text.charAt(at) != '\'') {
			return at;
		}
		char c1 = text.charAt(at + 1);
		switch (c1) {
			case 's', 'S', '\u017F', 't', 'T', 'm', 'M', 'd', 'D':
				return at + 2;
			default:
		}
		if (at + 2 < length) {
			char c2 = text.charAt(at + 2);
			boolean e = c2 == 'e' || c2 == 'E';
			if (((c1 == 'r' || c1 == 'R') && e) || ((c1 == 'v' || c1 == 'V') && e)
					|| ((c1 == 'l' || c1 == 'L') && (c2 == 'l' || c2 == 'L'))) {
				return at + 3;
			}
		}
		return at;
	}

	/** {@code \p{N}{1,3}}. */
	private static int number(String text, int start, int length) {
		int end = start;
		for (int digits = 0; digits < 3 && end < length; digits++) {
			int c = text.codePointAt(end);
			if (!isNumber(c)) {
				break;
			}
			end += Character.charCount(c);
		}
		return (end > start) ? end : -1;
	}

	/** {@code ?[^\s\p{L}\p{N}]+[\r\n/]*}. */
	private static int punctuation(String text, int start, int length) {
		int end = start;
		if (text.charAt(start) == ' ' && start + 1 < length && isPunctuation(text.codePointAt(start + 1))) {
			end++;
		}
		int from = end;
		while (end < length) {
			int c = text.codePointAt(end);
			if (!isPunctuation(c)) {
				break;
			}
			end += Character.charCount(c);
		}
		if (end == from) {
			return -1;
		}
		while (end < length) {
			char c = text.charAt(end);
			if (c != '\r' && c != '\n' && c != '/') {
				break;
			}
			end++;
		}
		return end;
	}

	/**
	 * The last three alternatives: {@code \s*[\r\n]+} up to the run's last line end, else
	 * {@code \s+(?!\S)}, all but the run's last space when a word follows, else
	 * {@code \s+}. Every character the earlier alternatives leave is white space, which
	 * is all in the Basic Multilingual Plane.
	 */
	private static int whitespace(String text, int start, int length) {
		int end = start;
		int lastLineEnd = -1;
		while (end < length) {
			char c = text.charAt(end);
			if (!isWhitespace(c)) {
				break;
			}
			if (c == '\r' || c == '\n') {
				lastLineEnd = end;
			}
			end++;
		}
		if (lastLineEnd >= 0) {
			return lastLineEnd + 1;
		}
		if (end < length && end - start >= 2) {
			return end - 1;
		}
		// Never reached with a character of no class above; a piece of its own all the
		// same.
		return (end > start) ? end : start + Character.charCount(text.codePointAt(start));
	}

	// Character classes, as the pattern's Unicode classes are.

	private static boolean isLetter(int type) {
		return type == Character.UPPERCASE_LETTER || type == Character.LOWERCASE_LETTER
				|| type == Character.TITLECASE_LETTER || type == Character.MODIFIER_LETTER
				|| type == Character.OTHER_LETTER;
	}

	private static boolean isMark(int type) {
		return type == Character.NON_SPACING_MARK || type == Character.COMBINING_SPACING_MARK
				|| type == Character.ENCLOSING_MARK;
	}

	private static boolean isNumberType(int type) {
		return type == Character.DECIMAL_DIGIT_NUMBER || type == Character.LETTER_NUMBER
				|| type == Character.OTHER_NUMBER;
	}

	/** {@code [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]}. */
	static boolean isUpperish(int c) {
		if (c < 0x80) {
			return c >= 'A' && c <= 'Z';
		}
		int type = Character.getType(c);
		return type == Character.UPPERCASE_LETTER || type == Character.TITLECASE_LETTER
				|| type == Character.MODIFIER_LETTER || type == Character.OTHER_LETTER || isMark(type);
	}

	/** {@code [\p{Ll}\p{Lm}\p{Lo}\p{M}]}. */
	static boolean isLowerish(int c) {
		if (c < 0x80) {
			return c >= 'a' && c <= 'z';
		}
		int type = Character.getType(c);
		return type == Character.LOWERCASE_LETTER || type == Character.MODIFIER_LETTER || type == Character.OTHER_LETTER
				|| isMark(type);
	}

	/** {@code \p{N}}. */
	static boolean isNumber(int c) {
		if (c < 0x80) {
			return c >= '0' && c <= '9';
		}
		return isNumberType(Character.getType(c));
	}

	/** {@code \s}, Unicode's White_Space. */
	static boolean isWhitespace(int c) {
		if (c < 0x80) {
			return c == ' ' || (c >= '\t' && c <= '\r');
		}
		return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029
				|| c == 0x202F || c == 0x205F || c == 0x3000;
	}

	/** {@code [^\r\n\p{L}\p{N}]}. */
	static boolean isPrefix(int c) {
		if (c < 0x80) {
			return c != '\r' && c != '\n' && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z')
					&& !(c >= '0' && c <= '9');
		}
		int type = Character.getType(c);
		return !isLetter(type) && !isNumberType(type);
	}

	/** {@code [^\s\p{L}\p{N}]}. */
	static boolean isPunctuation(int c) {
		if (c < 0x80) {
			return !isWhitespace(c) && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9');
		}
		if (isWhitespace(c)) {
			return false;
		}
		int type = Character.getType(c);
		return !isLetter(type) && !isNumberType(type);
	}

	/** One count's scratch: the piece's bytes and the merge's lists, grown as needed. */
	private static final class Merge {

		byte[] piece = new byte[64];

		/** The start of the part after each part; -1 once merged into the one before. */
		int[] next = new int[0];

		int[] previous = new int[0];

		/** The rank of each part joined with the next; {@link #NONE} if no token. */
		int[] pairRanks = new int[0];

		/**
		 * A heap of (rank, part) pairs, the rank high: the lowest rank, then leftmost.
		 */
		long[] heap = new long[0];

		int heapSize;

		/**
		 * Writes the text's UTF-8 bytes as String.getBytes does (a lone surrogate: '?').
		 */
		int utf8(String text, int start, int end) {
			int most = (end - start) * 3;
			if (this.piece.length < most) {
				this.piece = new byte[Math.max(most, this.piece.length * 2)];
			}
			byte[] out = this.piece;
			int size = 0;
			for (int i = start; i < end; i++) {
				char c = text.charAt(i);
				if (c < 0x80) {
					out[size++] = (byte) c;
				}
				else if (c < 0x800) {
					out[size++] = (byte) (0xC0 | (c >> 6));
					out[size++] = (byte) (0x80 | (c & 0x3F));
				}
				else if (Character.isHighSurrogate(c) && i + 1 < end && Character.isLowSurrogate(text.charAt(i + 1))) {
					int cp = Character.toCodePoint(c, text.charAt(++i));
					out[size++] = (byte) (0xF0 | (cp >> 18));
					out[size++] = (byte) (0x80 | ((cp >> 12) & 0x3F));
					out[size++] = (byte) (0x80 | ((cp >> 6) & 0x3F));
					out[size++] = (byte) (0x80 | (cp & 0x3F));
				}
				else if (Character.isSurrogate(c)) {
					out[size++] = '?';
				}
				else {
					out[size++] = (byte) (0xE0 | (c >> 12));
					out[size++] = (byte) (0x80 | ((c >> 6) & 0x3F));
					out[size++] = (byte) (0x80 | (c & 0x3F));
				}
			}
			return size;
		}

		/**
		 * Merges a piece that is no token of its own: the adjacent pair of parts whose
		 * join has the lowest rank (the leftmost of equals) first, until no join is a
		 * token; returns the parts left.
		 */
		int count(O200kCounter counter, int size) {
			if (this.next.length < size) {
				int grown = Math.max(size, this.next.length * 2);
				this.next = new int[grown];
				this.previous = new int[grown];
				this.pairRanks = new int[grown];
				this.heap = new long[grown];
			}
			byte[] bytes = this.piece;
			this.heapSize = 0;
			for (int part = 0; part < size; part++) {
				this.next[part] = part + 1;
				this.previous[part] = part - 1;
				int rank = (part + 2 <= size) ? counter.rank(bytes, part, part + 2) : NONE;
				this.pairRanks[part] = rank;
				if (rank != NONE) {
					push(rank, part);
				}
			}
			int parts = size;
			while (this.heapSize > 0) {
				long top = pop();
				int rank = (int) (top >>> 32);
				int part = (int) top;
				if (this.next[part] < 0 || this.pairRanks[part] != rank) {
					continue; // merged away, or its pair changed since
				}
				int joined = this.next[part];
				int after = this.next[joined];
				this.next[part] = after;
				this.next[joined] = -1;
				if (after < size) {
					this.previous[after] = part;
				}
				parts--;
				int pairRank = (after < size) ? counter.rank(bytes, part, this.next[after]) : NONE;
				this.pairRanks[part] = pairRank;
				if (pairRank != NONE) {
					push(pairRank, part);
				}
				int before = this.previous[part];
				if (before >= 0) {
					int beforeRank = counter.rank(bytes, before, after);
					this.pairRanks[before] = beforeRank;
					if (beforeRank != NONE) {
						push(beforeRank, before);
					}
				}
			}
			return parts;
		}

		private void push(int rank, int part) {
			if (this.heapSize == this.heap.length) {
				this.heap = Arrays.copyOf(this.heap, this.heap.length * 2);
			}
			long entry = ((long) rank << 32) | part;
			int at = this.heapSize++;
			while (at > 0) {
				int parent = (at - 1) >>> 1;
				if (this.heap[parent] <= entry) {
					break;
				}
				this.heap[at] = this.heap[parent];
				at = parent;
			}
			this.heap[at] = entry;
		}

		private long pop() {
			long top = this.heap[0];
			long last = this.heap[--this.heapSize];
			int at = 0;
			int half = this.heapSize >>> 1;
			while (at < half) {
				int child = 2 * at + 1;
				if (child + 1 < this.heapSize && this.heap[child + 1] < this.heap[child]) {
					child++;
				}
				if (last <= this.heap[child]) {
					break;
				}
				this.heap[at] = this.heap[child];
				at = child;
			}
			this.heap[at] = last;
			return top;
		}

	}

	private static final class Holder {

		// Read on first use: the table takes a moment and a few megabytes.
		static final O200kCounter INSTANCE = read();

		private static O200kCounter read() {
			try (InputStream in = O200kCounter.class.getResourceAsStream(RANKS)) {
				if (in == null) {
					throw new IllegalStateException("jtokkit's " + RANKS
							+ " is not on the class path; the o200k_base tokenizer needs jtokkit 1.1 or later");
				}
				BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.US_ASCII));
				Base64.Decoder base64 = Base64.getDecoder();
				byte[] bytes = new byte[1 << 21];
				int[] starts = new int[1 << 18];
				int[] ranks = new int[1 << 18];
				int tokens = 0;
				int size = 0;
				for (String line; (line = reader.readLine()) != null;) {
					int space = line.indexOf(' ');
					if (space < 0) {
						continue;
					}
					byte[] token = base64.decode(line.substring(0, space));
					if (size + token.length > bytes.length) {
						bytes = Arrays.copyOf(bytes, bytes.length * 2);
					}
					if (tokens + 1 >= starts.length) {
						starts = Arrays.copyOf(starts, starts.length * 2);
						ranks = Arrays.copyOf(ranks, ranks.length * 2);
					}
					System.arraycopy(token, 0, bytes, size, token.length);
					starts[tokens] = size;
					ranks[tokens] = Integer.parseInt(line, space + 1, line.length(), 10);
					size += token.length;
					tokens++;
				}
				starts[tokens] = size;
				return new O200kCounter(Arrays.copyOf(bytes, size), Arrays.copyOf(starts, tokens + 1),
						Arrays.copyOf(ranks, tokens));
			}
			catch (IOException ex) {
				throw new IllegalStateException("Could not read jtokkit's " + RANKS, ex);
			}
		}

	}

}
