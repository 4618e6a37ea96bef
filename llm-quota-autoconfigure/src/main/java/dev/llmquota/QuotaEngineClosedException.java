package dev.llmquota;

/**
 * The quota engine was shut down (the application is stopping) while a call waited for
 * admission, or a call arrived after that.
 */
public class QuotaEngineClosedException extends LlmQuotaException {

	public QuotaEngineClosedException(String provider, String region, String model) {
		super("The llm-quota engine is shut down; the call to " + where(provider, region, model) + " was not sent.",
				provider, region, model, null, null);
	}

}
