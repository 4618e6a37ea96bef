package dev.llmquota.client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * The headers llm-quota sets on every call a provider entry governs, replacing the
 * client's own ({@code llm.quota.providers.<id>.headers}): credentials per entry, such as
 * Azure's {@code api-key} or Anthropic's {@code x-api-key}. Their values never leave this
 * object but onto the wire: its {@code toString} names the headers only, and nothing
 * logs, shows or throws them.
 */
public final class Credentials {

	/** No headers: the client's own are sent. */
	public static final Credentials NONE = new Credentials(Map.of());

	/** The headers providers take keys and tokens in. */
	private static final List<String> CREDENTIAL_HEADERS = List.of("authorization", "api-key", "x-api-key",
			"x-goog-api-key");

	private final Map<String, String> headers;

	private Credentials(Map<String, String> headers) {
		this.headers = headers;
	}

	/**
	 * Credentials of the given headers, in their order.
	 * @param headers the header names and values
	 * @return the credentials
	 */
	public static Credentials of(Map<String, String> headers) {
		return headers.isEmpty() ? NONE
				: new Credentials(java.util.Collections.unmodifiableMap(new LinkedHashMap<>(headers)));
	}

	/**
	 * Whether there are none.
	 * @return whether empty
	 */
	public boolean isEmpty() {
		return this.headers.isEmpty();
	}

	/**
	 * Hands each header to a request being built, which replaces any of the same name.
	 * @param setter sets one header on the request
	 */
	public void applyTo(BiConsumer<String, String> setter) {
		this.headers.forEach(setter);
	}

	/**
	 * Returns the credential headers the caller set that a route's attempt to this entry
	 * drops before setting this entry's: a key meant for another provider must not reach
	 * this one. None when this entry sets no key of its own: the caller's is then its
	 * own.
	 * @return the header names, in lower case
	 */
	public List<String> droppedOnRoutes() {
		List<String> dropped = new ArrayList<>(CREDENTIAL_HEADERS);
		this.headers.keySet().forEach((own) -> dropped.remove(own.toLowerCase(Locale.ROOT)));
		// an entry that sets other headers only (a project, a beta) takes the caller's
		// key
		return (dropped.size() < CREDENTIAL_HEADERS.size()) ? dropped : List.of();
	}

	@Override
	public String toString() {
		return "Credentials" + this.headers.keySet() + " (values hidden)";
	}

}
