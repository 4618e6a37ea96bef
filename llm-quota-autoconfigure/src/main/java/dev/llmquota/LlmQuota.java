package dev.llmquota;

/**
 * Names of the per-request attributes that steer llm-quota, set with
 * {@code WebClient...attribute(name, value)} or the RestClient equivalent.
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

	private LlmQuota() {
	}

}
