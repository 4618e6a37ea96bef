package dev.llmquota.test.simulator.dialect;

/**
 * What the simulator needs from a request: model, provider-side input count, declared
 * output ceiling and the streaming options.
 *
 * @param model the model id (or Azure deployment)
 * @param inputTokens the input as this provider counts it
 * @param maxTokens the declared output ceiling, or 0 if the request names none
 * @param stream whether the answer is streamed
 * @param includeUsage whether a stream carries usage (OpenAI's opt-in)
 * @param apiVersion the API version the request named, or {@code null}
 */
public record CallRequest(String model, long inputTokens, long maxTokens, boolean stream, boolean includeUsage,
		String apiVersion) {

}
