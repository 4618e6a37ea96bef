package dev.llmquota.test.simulator.dialect;

import java.util.List;

/**
 * A generated answer: ids, counts and the output split into tokens.
 *
 * @param requestId the provider request id sent in headers and bodies
 * @param messageId the message, completion or response id
 * @param model the model id
 * @param createdEpochSecond creation time
 * @param inputTokens input tokens as counted at admission
 * @param outputTokens output tokens produced (0 for embeddings)
 * @param tokens the output text, one element per token
 * @param firstTokenMillis time to the first output token, for bodies that report it
 * @param latencyMillis time the answer took, for bodies that report it
 */
public record Completion(String requestId, String messageId, String model, long createdEpochSecond, long inputTokens,
		long outputTokens, List<String> tokens, long firstTokenMillis, long latencyMillis) {

	/**
	 * The full output text.
	 * @return the text
	 */
	public String text() {
		return String.join("", this.tokens);
	}

	/**
	 * Input plus output tokens.
	 * @return total tokens
	 */
	public long totalTokens() {
		return this.inputTokens + this.outputTokens;
	}

}
