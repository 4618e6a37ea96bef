package dev.llmquota.core;

/**
 * Admission class of a call: interactive callers are admitted before batch callers
 * waiting on the same account.
 */
public enum Priority {

	/** A caller someone is waiting for; the default. */
	INTERACTIVE,

	/** Background work that may wait. */
	BATCH

}
