package dev.llmquota.core;

/**
 * The state of a pool or account as the endpoint and health show it.
 */
public enum QuotaState {

	/** Calls are admitted by the books alone. */
	OK,

	/**
	 * A provider rate-limit penalty is in force now: the named dimension admits nothing.
	 */
	THROTTLED,

	/**
	 * The provider said an administrative quota is spent: calls fail fast until the
	 * reset, a successful probe, or an operator's reset.
	 */
	EXHAUSTED

}
