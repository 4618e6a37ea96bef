package dev.llmquota.provider;

import java.util.Locale;

/**
 * The wire dialects llm-quota speaks, with how each provider meters by default.
 */
public enum DialectId {

	/** OpenAI's API: reserves {@code max_tokens} at admission. */
	OPENAI(true, true),

	/** Azure OpenAI deployments: reserve prompt plus {@code max_tokens}. */
	AZURE_OPENAI(true, true),

	/**
	 * Anthropic's Messages API: output metered as generated, cached reads not counted
	 * toward input limits.
	 */
	ANTHROPIC(false, false),

	/** AWS Bedrock: reserves input plus {@code maxTokens}, settles with a burndown. */
	BEDROCK(true, false),

	/** Google Gemini and Vertex AI. */
	GEMINI(true, true),

	/** Ollama, usually local. */
	OLLAMA(true, true);

	private final boolean reserveMaxTokens;

	private final boolean cachedInputCounts;

	private final String id;

	DialectId(boolean reserveMaxTokens, boolean cachedInputCounts) {
		this.reserveMaxTokens = reserveMaxTokens;
		this.cachedInputCounts = cachedInputCounts;
		this.id = name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

	/**
	 * Returns the id used in configuration, for example {@code azure-openai}.
	 * @return the id
	 */
	public String id() {
		return this.id;
	}

	/**
	 * Returns whether the provider charges the output ceiling at admission by default.
	 * @return the default of {@code reserve-max-tokens}
	 */
	public boolean reserveMaxTokensByDefault() {
		return this.reserveMaxTokens;
	}

	/**
	 * Returns whether cached input tokens count toward the provider's input limits by
	 * default.
	 * @return the default of {@code cached-input-counts}
	 */
	public boolean cachedInputCountsByDefault() {
		return this.cachedInputCounts;
	}

	/**
	 * Returns the price of prompt-cache writes as a multiple of the input price, where
	 * {@code cache-write-input-per-million} is not set: Anthropic bills a five-minute
	 * cache write at 1.25 times input, on its API and for its models on Bedrock (and
	 * Bedrock's template, which may serve them); the others bill no surcharge.
	 * @param model the model's id, or the template's key
	 * @return the multiple
	 */
	public double cacheWritePriceFactorByDefault(String model) {
		if (this == ANTHROPIC) {
			return 1.25;
		}
		String id = model.toLowerCase(Locale.ROOT);
		boolean claude = id.contains("anthropic") || id.contains("claude") || id.equals("default");
		return (this == BEDROCK && claude) ? 1.25 : 1.0;
	}

}
