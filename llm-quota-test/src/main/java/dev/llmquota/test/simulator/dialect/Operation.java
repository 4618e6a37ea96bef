package dev.llmquota.test.simulator.dialect;

/**
 * The kind of call a request path names, which decides whether it generates output and so
 * how the books meter it.
 */
public enum Operation {

	/**
	 * Text generation: Chat Completions, Messages, Converse and ConverseStream, Bedrock
	 * InvokeModel of a text model, generateContent, Ollama chat.
	 */
	CHAT,

	/** OpenAI's Responses API: generates text, streams typed events. */
	RESPONSES,

	/**
	 * Embeddings: input only, no output, no output ceiling; only requests and input
	 * tokens are metered.
	 */
	EMBEDDINGS;

	/**
	 * Whether calls of this kind generate output tokens.
	 * @return false for embeddings
	 */
	public boolean generatesOutput() {
		return this != EMBEDDINGS;
	}

}
