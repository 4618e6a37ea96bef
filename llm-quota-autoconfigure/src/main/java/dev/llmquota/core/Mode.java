package dev.llmquota.core;

/**
 * What llm-quota does with the calls of a provider entry or model.
 */
public enum Mode {

	/** Calls wait for admission and refusals are handled: the default. */
	ENFORCE,

	/**
	 * Everything is computed and reported (what would have waited and how long, what
	 * would have been refused) and nothing is delayed or refused: the safe way to roll
	 * llm-quota out in front of production traffic.
	 */
	SHADOW,

	/** The calls pass untouched. */
	OFF

}
