package dev.llmquota.test.simulator.dialect;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Base64;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The embeddings wire OpenAI and Azure OpenAI share, and the vectors every dialect's
 * embeddings carry.
 */
final class EmbeddingsWire {

	/** Floats per simulated embedding: enough to look like one, small enough to read. */
	static final int DIMENSIONS = 8;

	private EmbeddingsWire() {
	}

	/**
	 * Reads {@code {model, input, encoding_format?}}: input is a string, an array of
	 * strings, one array of token ids or an array of them; token ids count as their
	 * number, text with the model's encoding and no per-input overhead.
	 */
	static CallRequest read(Route route, String model, JsonNode body, String apiVersion) {
		JsonNode input = body.get("input");
		boolean text = input != null && input.isString() && !input.stringValue().isEmpty();
		if (!text && (input == null || !input.isArray() || input.isEmpty())) {
			throw new BadRequestException("input: a non-empty string or array is required");
		}
		String format = body.path("encoding_format").asString("float");
		if (!"float".equals(format) && !"base64".equals(format)) {
			throw new BadRequestException("encoding_format: must be 'float' or 'base64'");
		}
		long tokens = 0;
		int inputs;
		if (input.isString()) {
			tokens = TokenCounter.openAi(model, input.stringValue());
			inputs = 1;
		}
		else if (input.get(0).isIntegralNumber()) {
			tokens = tokenIds(input);
			inputs = 1;
		}
		else {
			for (JsonNode element : input) {
				tokens += element.isString() ? TokenCounter.openAi(model, element.stringValue()) : tokenIds(element);
			}
			inputs = input.size();
		}
		return CallRequest.embedding(route, model, tokens, inputs, "base64".equals(format), apiVersion);
	}

	private static long tokenIds(JsonNode ids) {
		if (!ids.isArray() || ids.isEmpty()) {
			throw new BadRequestException("input: each element must be a non-empty string or array of token ids");
		}
		for (JsonNode id : ids) {
			if (!id.isIntegralNumber()) {
				throw new BadRequestException("input: token ids must be integers");
			}
		}
		return ids.size();
	}

	static String body(CallRequest call, Completion completion) {
		ObjectNode body = Json.object();
		body.put("object", "list");
		ArrayNode data = body.putArray("data");
		for (int i = 0; i < call.inputs(); i++) {
			ObjectNode embedding = data.addObject();
			embedding.put("object", "embedding");
			embedding.put("index", i);
			if (call.base64()) {
				embedding.put("embedding", base64(i));
			}
			else {
				embedding.set("embedding", vector(i));
			}
		}
		body.put("model", completion.model());
		ObjectNode usage = body.putObject("usage");
		usage.put("prompt_tokens", completion.inputTokens());
		usage.put("total_tokens", completion.inputTokens());
		return Json.write(body);
	}

	/**
	 * The embedding of the input at an index: a few floats, the same every time.
	 */
	static ArrayNode vector(int index) {
		ArrayNode vector = Json.MAPPER.createArrayNode();
		for (float value : values(index)) {
			vector.add(value);
		}
		return vector;
	}

	/**
	 * The same embedding as little-endian float32 bytes in base64, as OpenAI sends for
	 * {@code encoding_format: base64}.
	 */
	static String base64(int index) {
		ByteBuffer bytes = ByteBuffer.allocate(DIMENSIONS * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
		for (float value : values(index)) {
			bytes.putFloat(value);
		}
		return Base64.getEncoder().encodeToString(bytes.array());
	}

	private static float[] values(int index) {
		float[] values = new float[DIMENSIONS];
		for (int k = 0; k < DIMENSIONS; k++) {
			values[k] = Math.round(Math.sin(index * DIMENSIONS + k + 1.0) * 10_000) / 10_000f;
		}
		return values;
	}

}
