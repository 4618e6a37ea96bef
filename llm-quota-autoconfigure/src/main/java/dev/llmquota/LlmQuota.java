package dev.llmquota;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * Names of the per-request attributes that steer llm-quota, set with
 * {@code WebClient...attribute(name, value)} or the RestClient equivalent; and, where no
 * attribute can be set (SDK clients), the same values for a block of code:
 * {@code LlmQuota.with(LlmQuota.PRIORITY, Priority.BATCH).run(() -> ...)} for blocking
 * code, {@code mono.contextWrite(LlmQuota.with(...).context())} for reactive code.
 */
public final class LlmQuota {

	/**
	 * {@code INTERACTIVE} (the default) or {@code BATCH}, as a {@code Priority} or text.
	 */
	public static final String PRIORITY = "dev.llmquota.PRIORITY";

	/**
	 * The model to account the call to, overriding the one read from the body or path.
	 */
	public static final String MODEL = "dev.llmquota.MODEL";

	/** The provider entry's id, overriding the one matched by URL. */
	public static final String PROVIDER = "dev.llmquota.PROVIDER";

	/** {@code true}: this call is not governed. */
	public static final String SKIP = "dev.llmquota.SKIP";

	/** The longest this call may wait for admission, as a {@code Duration}. */
	public static final String MAX_WAIT = "dev.llmquota.MAX_WAIT";

	/**
	 * The base URL that addresses routes: a client whose base URL is this followed by a
	 * route's name ({@link #route(String)}) has its calls sent to the route's targets.
	 * Its host is reserved ({@code .invalid}): a call no adapter governs fails to resolve
	 * instead of going anywhere.
	 */
	public static final String ROUTES_URL = "http://llm-quota.invalid/routes/";

	/**
	 * Returns the base URL of a route ({@code llm.quota.routes.<name>}), for a client's
	 * base URL, for example {@code spring.ai.openai.base-url}.
	 * @param name the route's name
	 * @return its base URL
	 */
	public static String route(String name) {
		return ROUTES_URL + name;
	}

	private static final ThreadLocal<Map<String, Object>> current = ThreadLocal.withInitial(Map::of);

	private LlmQuota() {
	}

	/**
	 * Starts a scope with one value.
	 * @param name an attribute name of this class
	 * @param value its value
	 * @return the scope, to add values to and run code in
	 */
	public static Scope with(String name, Object value) {
		return new Scope(Map.of()).and(name, value);
	}

	/**
	 * Returns the value a scope set on this thread.
	 * @param name an attribute name of this class
	 * @return the value, or {@code null}
	 */
	public static Object current(String name) {
		return current.get().get(name);
	}

	/**
	 * Returns every value scopes set on this thread, as they are now: what an adapter
	 * that hands a call to another thread carries with it.
	 * @return the values by attribute name, unmodifiable
	 */
	public static Map<String, Object> currentScope() {
		return current.get();
	}

	/**
	 * Returns the value a scope set in a Reactor context, else on this thread.
	 * @param context the subscriber's context
	 * @param name an attribute name of this class
	 * @return the value, or {@code null}
	 */
	public static Object current(ContextView context, String name) {
		return context.hasKey(name) ? context.get(name) : current(name);
	}

	/**
	 * Attribute values for a block of code.
	 */
	public static final class Scope {

		private final Map<String, Object> values;

		private Scope(Map<String, Object> values) {
			this.values = values;
		}

		/**
		 * Returns this scope with one more value.
		 * @param name an attribute name of {@link LlmQuota}
		 * @param value its value
		 * @return the scope
		 */
		public Scope and(String name, Object value) {
			Map<String, Object> copy = new LinkedHashMap<>(this.values);
			copy.put(name, value);
			return new Scope(Collections.unmodifiableMap(copy));
		}

		/**
		 * Runs blocking code with these values; calls it makes on this thread see them.
		 * @param work the code
		 */
		public void run(Runnable work) {
			get(() -> {
				work.run();
				return null;
			});
		}

		/**
		 * Runs blocking code with these values and returns its result.
		 * @param <T> the result type
		 * @param work the code
		 * @return its result
		 */
		public <T> T get(Supplier<T> work) {
			Map<String, Object> outer = current.get();
			Map<String, Object> merged = new LinkedHashMap<>(outer);
			merged.putAll(this.values);
			current.set(Collections.unmodifiableMap(merged));
			try {
				return work.get();
			}
			finally {
				current.set(outer);
			}
		}

		/**
		 * Returns these values as a Reactor context, for {@code contextWrite}.
		 * @return the context
		 */
		public Context context() {
			return Context.of(this.values);
		}

	}

}
