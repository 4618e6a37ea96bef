package dev.llmquota.client;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

import dev.llmquota.LlmQuota;

/**
 * What every call of one client carries where its scope does not say: the attributes an
 * SDK's interceptor is bound to, for calls an SDK makes on a thread of its own (an
 * asynchronous client), where no {@link LlmQuota#with} scope reaches. Immutable.
 */
public final class BoundAttributes {

	/** Nothing bound. */
	public static final BoundAttributes NONE = new BoundAttributes(Map.of());

	private final Map<String, Object> values;

	private BoundAttributes(Map<String, Object> values) {
		this.values = values;
	}

	/**
	 * Returns these attributes and one more.
	 * @param calls the calls facade, whose configuration a bound provider entry must be
	 * in
	 * @param attribute {@link LlmQuota#PROVIDER}, {@link LlmQuota#PRIORITY},
	 * {@link LlmQuota#MODEL} or {@link LlmQuota#MAX_WAIT}
	 * @param value its value
	 * @return the attributes
	 * @throws IllegalArgumentException if the value is {@code null}, or names no provider
	 * entry
	 */
	public BoundAttributes with(LlmQuotaCalls calls, String attribute, Object value) {
		if (value == null) {
			throw new IllegalArgumentException("The value of " + attribute + " must not be null");
		}
		Map<String, ?> providers = calls.engine().config().providers();
		if (LlmQuota.PROVIDER.equals(attribute) && !providers.containsKey(value.toString())) {
			throw new IllegalArgumentException("No provider entry '" + value + "' (llm.quota.providers." + value
					+ "); the entries are " + providers.keySet());
		}
		Map<String, Object> values = new HashMap<>(this.values);
		values.put(attribute, value);
		return new BoundAttributes(Map.copyOf(values));
	}

	/**
	 * Returns a call's attributes: its scope's, then these.
	 * @param scope the attributes of the call's scope
	 * @return the call's attributes
	 */
	public Function<String, Object> under(Function<String, Object> scope) {
		if (this.values.isEmpty()) {
			return scope;
		}
		return (name) -> {
			Object value = scope.apply(name);
			return (value != null) ? value : this.values.get(name);
		};
	}

}
