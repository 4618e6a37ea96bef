package dev.llmquota.test.simulator.dialect;

/**
 * What the simulator needs from a request: model, provider-side input count, declared
 * output ceiling, the streaming options and which endpoint was called.
 *
 * @param model the model id (or Azure deployment)
 * @param inputTokens the input as this provider counts it
 * @param maxTokens the declared output ceiling, or 0 if the request names none (always 0
 * for embeddings)
 * @param stream whether the answer is streamed
 * @param includeUsage whether a stream carries usage (OpenAI's opt-in)
 * @param apiVersion the API version the request named, or {@code null}
 * @param operation the kind of call
 * @param api the provider's name of the endpoint called, as in {@link Route#api()}
 * @param inputs how many inputs an embeddings call embeds (one embedding each); 0 for
 * calls that generate
 * @param base64 whether embeddings are asked for as base64 (OpenAI's
 * {@code encoding_format}) rather than as arrays of floats
 */
public record CallRequest(String model, long inputTokens, long maxTokens, boolean stream, boolean includeUsage,
		String apiVersion, Operation operation, String api, int inputs, boolean base64) {

	/**
	 * A call that generates output, on the endpoint its route names.
	 * @param route the matched route
	 * @param model the model id
	 * @param inputTokens the input as the provider counts it
	 * @param maxTokens the declared output ceiling, or 0
	 * @param stream whether the answer is streamed
	 * @param includeUsage whether a stream carries usage
	 * @param apiVersion the API version, or {@code null}
	 * @return the call
	 */
	public static CallRequest generating(Route route, String model, long inputTokens, long maxTokens, boolean stream,
			boolean includeUsage, String apiVersion) {
		return new CallRequest(model, inputTokens, maxTokens, stream, includeUsage, apiVersion, route.operation(),
				route.api(), 0, false);
	}

	/**
	 * An embeddings call: never streamed, no output ceiling.
	 * @param route the matched route
	 * @param model the model id
	 * @param inputTokens the input as the provider counts it
	 * @param inputs how many inputs it embeds
	 * @param base64 whether the embeddings are asked for as base64
	 * @param apiVersion the API version, or {@code null}
	 * @return the call
	 */
	public static CallRequest embedding(Route route, String model, long inputTokens, int inputs, boolean base64,
			String apiVersion) {
		return new CallRequest(model, inputTokens, 0, false, true, apiVersion, Operation.EMBEDDINGS, route.api(),
				inputs, base64);
	}

}
