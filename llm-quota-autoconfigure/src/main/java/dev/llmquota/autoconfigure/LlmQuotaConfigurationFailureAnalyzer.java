package dev.llmquota.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains a start-up stopped by an invalid {@code llm.quota} property: which property,
 * what is wrong, and what to set.
 */
class LlmQuotaConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<InvalidQuotaPropertyException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, InvalidQuotaPropertyException cause) {
		String description = "llm-quota cannot start: " + cause.getMessage() + ".";
		String action = "Update " + cause.getProperty() + " in your configuration: " + cause.getFix();
		return new FailureAnalysis(description, action, cause);
	}

}
