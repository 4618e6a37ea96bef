package dev.llmquota.provider;

import java.net.URI;
import java.time.Instant;
import java.util.List;
import java.util.Set;

import dev.llmquota.core.ServerLimit;
import tools.jackson.databind.JsonNode;

/**
 * How one provider's API looks on the wire: where a call names its model, output ceiling
 * and input; what its rate-limit headers say; where its responses carry usage. One class
 * per provider; a new provider is one new implementation.
 */
public interface Dialect {

	/** The most choices a call is believed to ask for (OpenAI's bound on {@code n}). */
	int MOST_CHOICES = 128;

	/**
	 * Returns the dialect's id.
	 * @return the id
	 */
	DialectId id();

	/**
	 * Returns the dialect a call to a path of this provider speaks: this one, or where
	 * the provider serves another API beside its own (Ollama's OpenAI-compatible one
	 * under {@code /v1/}), that API's, whose requests, answers and usage it reads.
	 * @param path the call's raw path
	 * @param below where the part of the path below its entry's base-url starts
	 * @return the dialect
	 */
	default Dialect at(String path, int below) {
		return this;
	}

	/**
	 * Returns the model a call names, in its path or body.
	 * @param uri the call's URL
	 * @param body the request body, or {@code null} if it is not JSON
	 * @return the model id, or {@code null} if the call names none
	 */
	String model(URI uri, JsonNode body);

	/**
	 * Returns the output ceiling a call declares.
	 * @param body the request body
	 * @return the ceiling, or {@code null} if the call declares none
	 */
	Long outputCeiling(JsonNode body);

	/**
	 * Returns how many choices a call asks for: each may generate up to the output
	 * ceiling, and the provider reports (and reserves) the output of all of them.
	 * @param body the request body
	 * @return the choices, from 1 to {@link #MOST_CHOICES}
	 */
	default int choices(JsonNode body) {
		return 1;
	}

	/**
	 * Returns whether part of a call's input is stored at the provider rather than in its
	 * body (a previous response, a conversation, a cached content): the provider counts
	 * it, llm-quota cannot estimate it.
	 * @param body the request body
	 * @return whether input is stored at the provider
	 */
	default boolean storedInput(JsonNode body) {
		return false;
	}

	/**
	 * Returns where the dialect's requests carry their input.
	 * @return the shape
	 */
	RequestShape requestShape();

	/**
	 * Returns the text the provider counts as input, from a request already parsed.
	 * @param body the request body
	 * @return the input text
	 */
	default InputText inputText(JsonNode body) {
		return InputText.of(body, requestShape());
	}

	/**
	 * Returns whether the call's endpoint generates output (chat, completions, responses)
	 * or only reads its input (embeddings, moderations): a call that generates nothing
	 * reserves no output and is charged its input only.
	 * @param uri the call's URL
	 * @param body the request body, or {@code null} if it is not JSON
	 * @return whether the endpoint generates output
	 */
	default boolean generates(URI uri, JsonNode body) {
		return true;
	}

	/**
	 * Returns whether a call to this address spends a model's quota. Calls under a
	 * provider's URL that do not (file uploads, batch jobs, token counting, model
	 * management) pass through untouched: governed, they held a reservation no usage ever
	 * corrected, and an upload was estimated by its length.
	 * @param path the call's raw path
	 * @param below where the part below its entry's base-url starts: a gateway's path
	 * before it names no endpoint
	 * @return whether the call spends a model's quota
	 */
	default boolean spendsQuota(String path, int below) {
		return true;
	}

	/**
	 * Reads usage from an answer's headers, where a provider reports it there (Bedrock's
	 * InvokeModel); what the body says later wins.
	 * @param headers the answer's headers
	 * @param usage where to put what they say
	 */
	default void readHeaders(HeaderLookup headers, UsageAccumulator usage) {
	}

	/**
	 * Returns whether the call asks for a streamed answer.
	 * @param uri the call's URL
	 * @param body the request body, or {@code null}
	 * @return whether the answer is streamed
	 */
	boolean streaming(URI uri, JsonNode body);

	/**
	 * Returns how the answer's body is framed.
	 * @param streaming whether the call asked for a stream
	 * @return the framing
	 */
	default Framing framing(boolean streaming) {
		return streaming ? Framing.SSE : Framing.JSON;
	}

	/**
	 * Reads the rate-limit headers of an answer; unreadable values are left out.
	 * @param headers the answer's headers
	 * @param now the current time, to turn relative resets into instants
	 * @return what the headers said, per dimension
	 */
	default List<ServerLimit> rateLimits(HeaderLookup headers, Instant now) {
		return List.of();
	}

	/**
	 * Reads usage from a whole JSON answer.
	 * @param body the answer
	 * @param usage where to put what it says
	 */
	void readBody(JsonNode body, UsageAccumulator usage);

	/**
	 * Returns the top-level fields of a JSON answer {@link #readBody} reads: only these
	 * are parsed into a tree, the rest (the generated text) is skipped as it is read.
	 * @return the fields, or {@code null} when the whole answer is read
	 */
	default Set<String> bodyFields() {
		return null;
	}

	/**
	 * Reads usage and output text from one event of a streamed answer.
	 * @param event the event's JSON
	 * @param usage where to put what it says
	 */
	void readEvent(JsonNode event, UsageAccumulator usage);

	/**
	 * Classifies a refusal or failure by its body and headers, not its status alone.
	 * @param status the HTTP status
	 * @param headers the answer's headers
	 * @param body the answer's body, or {@code null} if it is not JSON
	 * @param now the current time
	 * @return what the answer means
	 */
	default Answer classify(int status, HeaderLookup headers, JsonNode body, Instant now) {
		return Refusals.generic(status, headers, Refusals.message(body), now);
	}

	/**
	 * Returns whether a call's stream may refuse it after a 200 (OpenAI's Responses API
	 * ends a rate-limited stream with {@code response.failed}): such a stream is held
	 * back from the caller until its first event that says how the call goes, so a
	 * refusal in it is retried like a 429.
	 * @param uri the call's URL
	 * @return whether the stream may carry a refusal
	 */
	default boolean refusesInStream(URI uri) {
		return false;
	}

	/**
	 * Returns whether an event of a stream says nothing yet about how the call goes (a
	 * stream's {@code response.created}): the stream is held back past it.
	 * @param event the event's JSON
	 * @return whether it is a preamble
	 */
	default boolean preamble(JsonNode event) {
		return false;
	}

	/**
	 * Classifies an event that ends a stream as a refusal, or returns {@code null} for
	 * any other event.
	 * @param event the event's JSON
	 * @param now the current time
	 * @return what the refusal means, or {@code null}
	 */
	default Answer refusal(JsonNode event, Instant now) {
		return null;
	}

	/**
	 * Returns the dialect for an id.
	 * @param id the dialect id
	 * @return the dialect
	 */
	static Dialect of(DialectId id) {
		return switch (id) {
			case OPENAI -> OpenAiDialect.INSTANCE;
			case AZURE_OPENAI -> AzureOpenAiDialect.INSTANCE;
			case ANTHROPIC -> AnthropicDialect.INSTANCE;
			case BEDROCK -> BedrockDialect.INSTANCE;
			case GEMINI -> GeminiDialect.INSTANCE;
			case OLLAMA -> OllamaDialect.INSTANCE;
		};
	}

}
