package dev.llmquota.client;

import java.io.IOException;
import java.util.function.BooleanSupplier;

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
	 * Sends one attempt, as its plan says: to {@link CallPlan#uri()}, with
	 * {@link CallPlan#body()} and its entry's credentials (a route's attempt goes to the
	 * target chosen at its admission).
	 * @param attempt the attempt's plan
	 * @return the answer
	 * @throws IOException if no answer arrived
	 */
	R send(CallPlan attempt) throws IOException;

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
	 * Reads the start of a stream into its head, until the head is complete or the stream
	 * ends, without losing a byte for whoever reads the answer next.
	 * @param response the answer
	 * @param head the head to feed
	 * @return the answer whose body still yields every byte, the head's included
	 * @throws IOException if the stream cannot be read
	 */
	R readHead(R response, StreamHead head) throws IOException;

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
	 * Returns a refusal to hand to the caller as the provider sent it. Where llm-quota
	 * decided (its pool enforces), a client's own retry must not run its attempts again:
	 * the stack marks it {@code x-should-retry: false}, or hands a client that would
	 * retry it a failure it does not retry. In shadow mode nothing is decided in the
	 * client's place, and the answer goes as it came.
	 * @param response the refusal, already read and closed
	 * @param body its bytes
	 * @param decided whether llm-quota decided (and made its attempts)
	 * @return the answer to hand to the caller
	 */
	R passOn(R response, byte[] body, boolean decided);

	/**
	 * Ends a call that llm-quota fails after the provider answered (no attempt is left,
	 * the provider's wait exceeds max-wait, a quota is spent): by default the caller gets
	 * the contract exception; a stack whose callers have a retry loop of their own hands
	 * on the provider's answer instead, marked not to be retried, so retries never
	 * multiply.
	 * @param response the provider's last answer, already read and closed
	 * @param body its bytes
	 * @param failure the contract exception
	 * @return the answer to hand to the caller, if the stack hands one on
	 */
	default R failAfterAnswer(R response, byte[] body, RuntimeException failure) {
		throw failure;
	}

	/**
	 * Tells whether the caller cancelled the call, for a stack whose calls can be
	 * cancelled and that then refuses to send them: a call found cancelled once admitted
	 * is given back whole instead of sent (the provider never sees it). It waits for
	 * admission as any call does, within the call's own timeout. {@code null} where calls
	 * cannot be cancelled.
	 * @return whether the call was cancelled, or {@code null}
	 */
	default BooleanSupplier cancellation() {
		return null;
	}

}
