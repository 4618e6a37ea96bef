package dev.llmquota.test.simulator.dialect;

import java.util.Map;

/**
 * A request path a dialect serves, with what the path itself says.
 *
 * @param pathModel the model or deployment named in the path, or {@code null}
 * @param stream whether the path itself asks for a stream
 * @param query the query parameters
 * @param operation the kind of call
 * @param api the provider's own name of the endpoint, as the path spells it (for example
 * {@code chat/completions}, {@code responses}, {@code converse-stream},
 * {@code batchEmbedContents}); dialects serving several shapes answer by it
 */
public record Route(String pathModel, boolean stream, Map<String, String> query, Operation operation, String api) {

}
