package dev.llmquota.provider;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Set;

import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.async.ByteBufferFeeder;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * Reads a whole JSON answer as its bytes pass, without copying them: Jackson's
 * non-blocking parser is fed each buffer and keeps, as a tree, only the top-level fields
 * the dialect reads (the generated text is tokenized and dropped). A top-level array (a
 * stream sent as one JSON array) keeps its elements whole. What it kept counts only once
 * the document ended well-formed; otherwise the answer reads as unreadable.
 */
final class JsonAnswerReader {

	private static final JsonNodeFactory nodes = JsonTrees.nodes;

	/** The top-level fields kept, or {@code null} to keep them all. */
	private final Set<String> fields;

	private final JsonParser parser;

	private final ByteBufferFeeder feeder;

	/** The containers being built, the root first. */
	private final Deque<JsonNode> open = new ArrayDeque<>();

	/** The root: an object of the fields kept, or the array of elements. */
	private JsonNode root;

	/** The name of the value to come, in an object. */
	private String name;

	/** Whether the tokens of a top-level field not kept are being dropped. */
	private boolean skipping;

	/** How deep inside the dropped value the parser is. */
	private int skipDepth;

	private boolean ended;

	private String broken;

	JsonAnswerReader(Set<String> fields) {
		this.fields = fields;
		this.parser = JsonTrees.nonBlockingParser();
		this.feeder = (ByteBufferFeeder) this.parser.nonBlockingInputFeeder();
	}

	/**
	 * Reads the next bytes; the buffer is read through before this returns, never kept.
	 */
	void feed(ByteBuffer bytes) {
		if (this.broken != null || !bytes.hasRemaining()) {
			return;
		}
		try {
			this.feeder.feedInput(bytes);
			drain();
		}
		catch (JacksonException ex) {
			this.broken = ex.getOriginalMessage();
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
		if (this.broken == null) {
			try {
				this.feeder.endOfInput();
				drain();
			}
			catch (JacksonException ex) {
				this.broken = ex.getOriginalMessage();
			}
		}
		this.parser.close();
		if (this.broken == null && this.root != null && !this.ended) {
			this.broken = "the answer ended inside its JSON";
		}
		if (this.broken != null) {
			throw new Unreadable(this.broken);
		}
		return (this.root != null && this.root.isContainer()) ? this.root : null;
	}

	private void drain() {
		JsonToken token;
		while ((token = this.parser.nextToken()) != null && token != JsonToken.NOT_AVAILABLE) {
			if (this.ended) {
				this.broken = "more content followed the answer's JSON";
				return;
			}
			take(token);
		}
	}

	private void take(JsonToken token) {
		if (this.skipping) {
			if (token.isStructStart()) {
				this.skipDepth++;
			}
			else if (token.isStructEnd()) {
				this.skipDepth--;
			}
			this.skipping = this.skipDepth > 0;
			return;
		}
		if (token == JsonToken.PROPERTY_NAME) {
			this.name = this.parser.currentName();
			// a top-level field the dialect does not read is dropped, token by token
			this.skipping = this.open.size() == 1 && this.fields != null && !this.fields.contains(this.name);
			this.skipDepth = 0;
			return;
		}
		if (token.isStructEnd()) {
			this.open.removeLast();
			this.ended = this.open.isEmpty();
			return;
		}
		JsonNode value = (token == JsonToken.START_OBJECT) ? nodes.objectNode()
				: (token == JsonToken.START_ARRAY) ? nodes.arrayNode() : JsonTrees.scalar(this.parser, token);
		JsonNode parent = this.open.peekLast();
		if (parent == null) {
			this.root = value;
			this.ended = !value.isContainer();
		}
		else if (parent instanceof ObjectNode object) {
			object.set(this.name, value);
		}
		else {
			((ArrayNode) parent).add(value);
		}
		if (value.isContainer()) {
			this.open.addLast(value);
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
