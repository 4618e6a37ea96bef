package dev.llmquota.client;

import java.io.IOException;

import dev.llmquota.provider.HeaderLookup;

/**
 * What a blocking HTTP stack (RestClient, OkHttp) lends to
 * {@link LlmQuotaCalls#exchange}: sending one attempt, and handling its answer in the
 * stack's own types.
 *
 * @param <R> the stack's response type
 */
public interface BlockingExchange<R> {

	/**
	 * Sends one attempt.
	 * @return the answer
	 * @throws IOException if no answer arrived
	 */
	R send() throws IOException;

	/**
	 * Returns an answer's HTTP status.
	 * @param response the answer
	 * @return the status
	 * @throws IOException if the status cannot be read (a stack that reads it lazily)
	 */
	int status(R response) throws IOException;

	/**
	 * Closes an answer that will not be handed on, quietly.
	 * @param response the answer
	 */
	void discard(R response);

	/**
	 * Returns an answer's headers.
	 * @param response the answer
	 * @return the headers
	 */
	HeaderLookup headers(R response);

	/**
	 * Reads a refusal's body, at most {@link LlmQuotaCalls#MAX_REFUSAL_BYTES}, and closes
	 * the answer.
	 * @param response the refusal
	 * @return its bytes
	 * @throws IOException if it cannot be read
	 */
	byte[] readRefusal(R response) throws IOException;

	/**
	 * Returns a successful answer whose body, as the caller reads it, feeds the call.
	 * @param response the answer
	 * @param call the governed call
	 * @return the answer to hand to the caller
	 */
	R follow(R response, GovernedCall call);

	/**
	 * Returns a refusal to hand to the caller as the provider sent it.
	 * @param response the refusal, already read and closed
	 * @param body its bytes
	 * @return the answer to hand to the caller
	 */
	R passOn(R response, byte[] body);

}
