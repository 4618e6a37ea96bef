package dev.llmquota.provider;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Reads a whole JSON answer as its bytes pass, without keeping them: a small scanner
 * checks the document's grammar byte by byte and copies out only the top-level fields the
 * dialect reads (a top-level array, a stream sent as one JSON array, keeps its elements),
 * built then into Jackson's tree as Jackson's own parser would build it. The generated
 * text is scanned, never decoded: a general parser costs several times what this scan
 * does between the HTTP stack's work, whose caches it finds cold (docs/benchmarks.md,
 * 2d). What it kept counts only once the document ended well-formed; otherwise the answer
 * reads as unreadable.
 * <p>
 * The scan holds the grammar Jackson holds by default (no comments, no trailing commas,
 * no leading zeros, strings without raw control characters, valid escapes, nesting up to
 * 500, numbers up to 1,000 characters), and JsonAnswerReaderTests holds it to Jackson's
 * answers. It does not check that the text it skips is valid UTF-8; a kept value's must
 * be.
 */
final class JsonAnswerReader {

	/** Jackson's default bound on nesting. */
	private static final int MAX_DEPTH = 500;

	/** The longest number or literal read; Jackson's default bound on numbers. */
	private static final int MAX_LITERAL = 1000;

	// what the scanner expects next
	private static final int VALUE = 0;

	/** A value or, right after '[', its end. */
	private static final int VALUE_OR_END = 1;

	/** A key or, right after '{', its end. */
	private static final int KEY_OR_END = 2;

	private static final int KEY = 3;

	private static final int COLON = 4;

	/** A ',' or the end of the container, or of the document at the top. */
	private static final int AFTER_VALUE = 5;

	private static final int STRING = 6;

	private static final int LITERAL = 7;

	/** The top-level field names kept, or {@code null} to keep them all. */
	private final Set<String> fields;

	/** The containers open, '{' or '[', the outermost first. */
	private byte[] open = new byte[16];

	private int depth;

	private int state = VALUE;

	private boolean started;

	private boolean ended;

	/** In a string: whether it is a key, and the escape being read. */
	private boolean key;

	private boolean escaped;

	/** Hex digits still due in a {@code \\u} escape. */
	private int hexDue;

	/** A number or literal being read. */
	private final StringBuilder literal = new StringBuilder();

	/** The top-level key being read, as raw bytes (escapes as written). */
	private final Bytes name = new Bytes();

	/**
	 * Whether the top-level key read has an escape, so its raw bytes are not its name.
	 */
	private boolean nameEscaped;

	/** The value being kept, from its first byte, while {@link #keeping}. */
	private final Bytes kept = new Bytes();

	private boolean keeping;

	/** The kept values' names (for an object) and bytes, in order. */
	private final List<String> keptNames = new ArrayList<>();

	private final List<byte[]> keptValues = new ArrayList<>();

	/** Whether the document is an array at the top, whose elements are kept. */
	private boolean topArray;

	private String broken;

	JsonAnswerReader(Set<String> fields) {
		this.fields = fields;
	}

	/**
	 * Reads the next bytes; the buffer is read through before this returns, never kept.
	 */
	void feed(ByteBuffer bytes) {
		if (bytes.hasArray()) {
			byte[] array = bytes.array();
			int from = bytes.arrayOffset() + bytes.position();
			int to = bytes.arrayOffset() + bytes.limit();
			for (int i = from; i < to && this.broken == null; i++) {
				if (this.state == STRING && !this.escaped && this.hexDue == 0 && !(this.key && this.depth == 1)) {
					// a run of a string's printable ASCII in one step: most of an answer
					int run = i;
					while (run < to && plain(array[run])) {
						run++;
					}
					if (this.keeping) {
						this.kept.add(array, i, run - i);
					}
					i = run;
					if (i == to) {
						break;
					}
				}
				next(array[i]);
			}
		}
		else {
			for (int i = bytes.position(); i < bytes.limit() && this.broken == null; i++) {
				next(bytes.get(i));
			}
		}
	}

	/**
	 * Ends the input and returns what was kept: the object of the fields read, or the
	 * array of a stream sent as one JSON array; {@code null} for an empty answer or one
	 * that is a single scalar.
	 * @return the answer as kept
	 * @throws Unreadable when the answer was not one well-formed JSON document
	 */
	JsonNode finish() {
		if (this.broken == null && this.state == LITERAL && this.depth == 0) {
			// a scalar document ends with its input
			endLiteral();
		}
		if (this.broken == null && this.started && !this.ended) {
			this.broken = "the answer ended inside its JSON";
		}
		if (this.broken != null) {
			throw new Unreadable(this.broken);
		}
		if (!this.started || !containerAtTop()) {
			return null;
		}
		try {
			return kept();
		}
		catch (IllegalArgumentException ex) {
			throw new Unreadable(ex.getMessage());
		}
	}

	/**
	 * Returns whether the document's value has ended, well-formed so far: what follows
	 * may only be whitespace.
	 * @return whether it has
	 */
	boolean ended() {
		return this.ended && this.broken == null;
	}

	private boolean containerAtTop() {
		return this.topArray || this.open[0] == '{';
	}

	private JsonNode kept() {
		if (this.topArray) {
			ArrayNode array = JsonTrees.nodes.arrayNode();
			for (byte[] element : this.keptValues) {
				array.add(new Tree(element).value());
			}
			return array;
		}
		ObjectNode object = JsonTrees.nodes.objectNode();
		for (int i = 0; i < this.keptValues.size(); i++) {
			object.set(this.keptNames.get(i), new Tree(this.keptValues.get(i)).value());
		}
		return object;
	}

	private void next(byte b) {
		if (this.keeping) {
			this.kept.add(b);
		}
		switch (this.state) {
			case STRING -> string(b);
			case LITERAL -> {
				if (literalByte(b)) {
					if (this.literal.length() >= MAX_LITERAL) {
						fail("a number longer than " + MAX_LITERAL + " characters");
						return;
					}
					this.literal.append((char) b);
				}
				else {
					if (this.keeping && this.depth == 1) {
						// the delimiter is not the literal's
						this.kept.size--;
					}
					endLiteral();
					if (this.broken == null) {
						structure(b);
					}
				}
			}
			default -> structure(b);
		}
	}

	private void structure(byte b) {
		if (b == ' ' || b == '\n' || b == '\r' || b == '\t') {
			if (this.keeping && this.depth == 1 && this.kept.size == 1) {
				// whitespace before a kept value is not its
				this.kept.size = 0;
			}
			return;
		}
		if (this.ended) {
			fail("more content followed the answer's JSON");
			return;
		}
		if (!this.started && b == (byte) 0xEF) {
			// a UTF-8 byte order mark before the document: EF BB BF
			this.state = -1;
		}
		if (this.state < 0) {
			bom(b);
			return;
		}
		switch (this.state) {
			case VALUE, VALUE_OR_END -> value(b);
			case KEY_OR_END, KEY -> {
				if (b == '"') {
					startString(true);
				}
				else if (b == '}' && this.state == KEY_OR_END) {
					close(b);
				}
				else {
					fail("a key expected, not " + shown(b));
				}
			}
			case COLON -> {
				if (b == ':') {
					this.state = VALUE;
					keepIfWanted();
				}
				else {
					fail("':' expected after a key, not " + shown(b));
				}
			}
			case AFTER_VALUE -> {
				if (b == ',' && this.depth > 0) {
					this.state = (this.open[this.depth - 1] == '{') ? KEY : VALUE;
					if (this.state == VALUE) {
						keepIfElement();
					}
				}
				else if ((b == '}' || b == ']') && this.depth > 0) {
					close(b);
				}
				else {
					fail("',' or the container's end expected, not " + shown(b));
				}
			}
			default -> fail("unexpected " + shown(b));
		}
	}

	/** The byte order mark's bytes: a state below 0 counts those read. */
	private void bom(byte b) {
		byte[] mark = { (byte) 0xEF, (byte) 0xBB, (byte) 0xBF };
		int read = -this.state - 1;
		if (b != mark[read]) {
			fail("a broken byte order mark");
			return;
		}
		this.state = (read == 2) ? VALUE : this.state - 1;
	}

	private void value(byte b) {
		if (!this.started) {
			this.started = true;
			if (b == '[') {
				this.topArray = true;
			}
		}
		if (b == '{' || b == '[') {
			if (this.depth >= MAX_DEPTH) {
				fail("nesting deeper than " + MAX_DEPTH);
				return;
			}
			if (this.depth == this.open.length) {
				this.open = Arrays.copyOf(this.open, this.depth * 2);
			}
			this.open[this.depth++] = b;
			this.state = (b == '{') ? KEY_OR_END : VALUE_OR_END;
			if (this.depth == 1 && this.topArray) {
				keepIfElement();
			}
		}
		else if (b == ']' && this.state == VALUE_OR_END) {
			close(b);
		}
		else if (b == '"') {
			startString(false);
		}
		else if (b == '-' || (b >= '0' && b <= '9') || b == 't' || b == 'f' || b == 'n') {
			this.state = LITERAL;
			this.literal.setLength(0);
			this.literal.append((char) b);
		}
		else {
			fail("a value expected, not " + shown(b));
		}
	}

	private void close(byte b) {
		byte opened = this.open[this.depth - 1];
		if ((b == '}') != (opened == '{')) {
			fail("'" + (char) b + "' closes a '" + (char) opened + "'");
			return;
		}
		this.depth--;
		valueEnded();
	}

	/** A value ended: at the top the document ends; at depth 1 a kept value is done. */
	private void valueEnded() {
		this.state = AFTER_VALUE;
		if (this.depth == 0) {
			this.ended = true;
		}
		if (this.depth == 1 && this.keeping) {
			this.keeping = false;
			this.keptValues.add(this.kept.copy());
		}
	}

	private void startString(boolean isKey) {
		this.state = STRING;
		this.key = isKey;
		this.escaped = false;
		this.hexDue = 0;
		if (isKey && this.depth == 1) {
			this.name.size = 0;
			this.nameEscaped = false;
		}
	}

	private void string(byte b) {
		boolean topKey = this.key && this.depth == 1;
		if (this.hexDue > 0) {
			if (!hex(b)) {
				fail("a \\u escape needs four hex digits, not " + shown(b));
				return;
			}
			this.hexDue--;
		}
		else if (this.escaped) {
			this.escaped = false;
			if (b == 'u') {
				this.hexDue = 4;
			}
			else if (b != '"' && b != '\\' && b != '/' && b != 'b' && b != 'f' && b != 'n' && b != 'r' && b != 't') {
				fail("an unknown escape \\" + shown(b));
				return;
			}
		}
		else if (b == '\\') {
			this.escaped = true;
			this.nameEscaped |= topKey;
		}
		else if (b == '"') {
			if (this.key) {
				this.state = COLON;
			}
			else {
				valueEnded();
			}
			return;
		}
		else if ((b & 0xFF) < 0x20) {
			fail("a control character in a string");
			return;
		}
		if (topKey) {
			this.name.add(b);
		}
	}

	private void endLiteral() {
		if (!literal(this.literal)) {
			String text = this.literal.toString();
			fail("not a JSON value: " + ((text.length() > 40) ? text.substring(0, 40) + "..." : text));
			return;
		}
		valueEnded();
	}

	/**
	 * A value at depth 1 of the top-level object starts after a key the dialect reads.
	 */
	private void keepIfWanted() {
		if (this.depth != 1 || this.topArray || !wanted()) {
			return;
		}
		this.keptNames.add(nameRead());
		this.keeping = true;
		this.kept.size = 0;
	}

	/** An element of a top-level array starts: every one is kept. */
	private void keepIfElement() {
		if (this.depth == 1 && this.topArray) {
			this.keeping = true;
			this.kept.size = 0;
		}
	}

	private boolean wanted() {
		if (this.fields == null) {
			return true;
		}
		if (this.nameEscaped) {
			return this.fields.contains(nameRead());
		}
		for (String field : this.fields) {
			if (this.name.sameAs(field)) {
				return true;
			}
		}
		return false;
	}

	/** The key read, decoded as a kept string is: its escapes, its UTF-8 checked. */
	private String nameRead() {
		byte[] quoted = new byte[this.name.size + 2];
		quoted[0] = '"';
		System.arraycopy(this.name.data, 0, quoted, 1, this.name.size);
		quoted[quoted.length - 1] = '"';
		return new Tree(quoted).string();
	}

	private void fail(String reason) {
		this.broken = reason;
	}

	private static boolean literalByte(byte b) {
		return (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || b == '-' || b == '+'
				|| b == '.';
	}

	/**
	 * Whether a byte in a string is printable ASCII, neither a quote nor a backslash: one
	 * that stands for itself and ends nothing.
	 */
	private static boolean plain(byte b) {
		return b >= ' ' && b != '"' && b != '\\';
	}

	private static boolean hex(byte b) {
		return (b >= '0' && b <= '9') || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F');
	}

	/**
	 * Whether a literal is {@code true}, {@code false}, {@code null} or a JSON number.
	 */
	private static boolean literal(CharSequence text) {
		if ("true".contentEquals(text) || "false".contentEquals(text) || "null".contentEquals(text)) {
			return true;
		}
		int i = 0;
		int length = text.length();
		if (i < length && text.charAt(i) == '-') {
			i++;
		}
		if (i >= length) {
			return false;
		}
		if (text.charAt(i) == '0') {
			i++;
		}
		else if (text.charAt(i) >= '1' && text.charAt(i) <= '9') {
			while (i < length && Character.isDigit(text.charAt(i))) {
				i++;
			}
		}
		else {
			return false;
		}
		if (i < length && text.charAt(i) == '.') {
			int digits = ++i;
			while (i < length && Character.isDigit(text.charAt(i))) {
				i++;
			}
			if (i == digits) {
				return false;
			}
		}
		if (i < length && (text.charAt(i) == 'e' || text.charAt(i) == 'E')) {
			i++;
			if (i < length && (text.charAt(i) == '+' || text.charAt(i) == '-')) {
				i++;
			}
			int digits = i;
			while (i < length && Character.isDigit(text.charAt(i))) {
				i++;
			}
			if (i == digits) {
				return false;
			}
		}
		return i == length;
	}

	private static String shown(byte b) {
		return (b >= 0x20 && b < 0x7F) ? "'" + (char) b + "'" : String.format("byte 0x%02x", b & 0xFF);
	}

	/**
	 * A kept value as Jackson's tree, built as {@link JsonTrees#value} builds it: its
	 * grammar was checked as it passed, so this reads it without checking it again, but
	 * for the UTF-8 of its strings.
	 */
	private static final class Tree {

		private final byte[] bytes;

		private int at;

		Tree(byte[] bytes) {
			this.bytes = bytes;
		}

		JsonNode value() {
			skipSpace();
			byte b = this.bytes[this.at];
			if (b == '{') {
				this.at++;
				ObjectNode object = JsonTrees.nodes.objectNode();
				skipSpace();
				if (this.bytes[this.at] == '}') {
					this.at++;
					return object;
				}
				while (true) {
					skipSpace();
					String name = string();
					skipSpace();
					this.at++;
					object.set(name, value());
					skipSpace();
					if (this.bytes[this.at++] == '}') {
						return object;
					}
				}
			}
			if (b == '[') {
				this.at++;
				ArrayNode array = JsonTrees.nodes.arrayNode();
				skipSpace();
				if (this.bytes[this.at] == ']') {
					this.at++;
					return array;
				}
				while (true) {
					array.add(value());
					skipSpace();
					if (this.bytes[this.at++] == ']') {
						return array;
					}
				}
			}
			if (b == '"') {
				return JsonTrees.nodes.stringNode(string());
			}
			int start = this.at;
			while (this.at < this.bytes.length && literalByte(this.bytes[this.at])) {
				this.at++;
			}
			return scalar(new String(this.bytes, start, this.at - start, StandardCharsets.US_ASCII));
		}

		/** A number or literal, as Jackson's parser types it. */
		private static JsonNode scalar(String text) {
			switch (text) {
				case "true":
					return JsonTrees.nodes.booleanNode(true);
				case "false":
					return JsonTrees.nodes.booleanNode(false);
				case "null":
					return JsonTrees.nodes.nullNode();
				default:
			}
			if (text.indexOf('.') >= 0 || text.indexOf('e') >= 0 || text.indexOf('E') >= 0) {
				return JsonTrees.nodes.numberNode(Double.parseDouble(text));
			}
			if (text.length() <= 18) {
				long number = Long.parseLong(text);
				return (number == (int) number) ? JsonTrees.nodes.numberNode((int) number)
						: JsonTrees.nodes.numberNode(number);
			}
			BigInteger number = new BigInteger(text);
			if (number.bitLength() < Integer.SIZE) {
				return JsonTrees.nodes.numberNode(number.intValue());
			}
			if (number.bitLength() < Long.SIZE) {
				return JsonTrees.nodes.numberNode(number.longValue());
			}
			return JsonTrees.nodes.numberNode(number);
		}

		/** A string at the position, its quotes included; its UTF-8 must be valid. */
		String string() {
			int from = ++this.at;
			while (plain(this.bytes[this.at])) {
				this.at++;
			}
			if (this.bytes[this.at] == '"') {
				// printable ASCII without an escape, the common case: no builder
				return new String(this.bytes, from, this.at++ - from, StandardCharsets.ISO_8859_1);
			}
			StringBuilder text = new StringBuilder(this.at - from + 16);
			for (int i = from; i < this.at; i++) {
				text.append((char) this.bytes[i]);
			}
			while (true) {
				int b = this.bytes[this.at++] & 0xFF;
				if (b == '"') {
					return text.toString();
				}
				if (b == '\\') {
					char escaped = (char) this.bytes[this.at++];
					switch (escaped) {
						case 'b' -> text.append('\b');
						case 'f' -> text.append('\f');
						case 'n' -> text.append('\n');
						case 'r' -> text.append('\r');
						case 't' -> text.append('\t');
						case 'u' -> {
							text.append((char) Integer
								.parseInt(new String(this.bytes, this.at, 4, StandardCharsets.US_ASCII), 16));
							this.at += 4;
						}
						default -> text.append(escaped);
					}
				}
				else if (b < 0x80) {
					text.append((char) b);
				}
				else {
					text.appendCodePoint(codePoint(b));
				}
			}
		}

		/** A character of two to four bytes, whose first is {@code first}. */
		private int codePoint(int first) {
			int more;
			int code;
			int least;
			if ((first & 0xE0) == 0xC0) {
				more = 1;
				code = first & 0x1F;
				least = 0x80;
			}
			else if ((first & 0xF0) == 0xE0) {
				more = 2;
				code = first & 0x0F;
				least = 0x800;
			}
			else if ((first & 0xF8) == 0xF0) {
				more = 3;
				code = first & 0x07;
				least = 0x10000;
			}
			else {
				throw new IllegalArgumentException("invalid UTF-8 start byte 0x" + Integer.toHexString(first));
			}
			for (int i = 0; i < more; i++) {
				int next = (this.at < this.bytes.length) ? this.bytes[this.at++] & 0xFF : 0;
				if ((next & 0xC0) != 0x80) {
					throw new IllegalArgumentException("invalid UTF-8 middle byte 0x" + Integer.toHexString(next));
				}
				code = (code << 6) | (next & 0x3F);
			}
			if (code < least || code > Character.MAX_CODE_POINT || (code >= 0xD800 && code <= 0xDFFF)) {
				throw new IllegalArgumentException("invalid UTF-8 character 0x" + Integer.toHexString(code));
			}
			return code;
		}

		private void skipSpace() {
			while (this.at < this.bytes.length) {
				byte b = this.bytes[this.at];
				if (b != ' ' && b != '\n' && b != '\r' && b != '\t') {
					return;
				}
				this.at++;
			}
		}

	}

	/** A growable byte buffer. */
	private static final class Bytes {

		private byte[] data = new byte[32];

		private int size;

		void add(byte b) {
			if (this.size == this.data.length) {
				this.data = Arrays.copyOf(this.data, this.size * 2);
			}
			this.data[this.size++] = b;
		}

		void add(byte[] bytes, int from, int length) {
			if (this.size + length > this.data.length) {
				this.data = Arrays.copyOf(this.data, Math.max(this.data.length * 2, this.size + length));
			}
			System.arraycopy(bytes, from, this.data, this.size, length);
			this.size += length;
		}

		byte[] copy() {
			return Arrays.copyOf(this.data, this.size);
		}

		/** Whether these bytes are the name's: an ASCII name's without decoding them. */
		boolean sameAs(String name) {
			if (!ascii(name)) {
				return name.equals(new String(this.data, 0, this.size, StandardCharsets.UTF_8));
			}
			if (this.size != name.length()) {
				return false;
			}
			for (int i = 0; i < this.size; i++) {
				if (this.data[i] != name.charAt(i)) {
					return false;
				}
			}
			return true;
		}

		private static boolean ascii(String name) {
			for (int i = 0; i < name.length(); i++) {
				if (name.charAt(i) >= 0x80) {
					return false;
				}
			}
			return true;
		}

	}

	/** The answer was not one well-formed JSON document. */
	static final class Unreadable extends RuntimeException {

		private static final long serialVersionUID = 1L;

		Unreadable(String message) {
			super(message);
		}

	}

}
