package dev.llmquota.client;

import java.util.LinkedHashMap;
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

	@Override
	public String toString() {
		return "Credentials" + this.headers.keySet() + " (values hidden)";
	}

}
