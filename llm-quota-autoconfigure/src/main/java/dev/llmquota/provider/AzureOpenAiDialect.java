package dev.llmquota.provider;

import java.net.URI;
import java.util.List;

import tools.jackson.databind.JsonNode;

/**
 * Azure OpenAI: OpenAI's shapes, with the deployment in the path standing for the model.
 */
final class AzureOpenAiDialect extends OpenAiDialect {

	static final AzureOpenAiDialect INSTANCE = new AzureOpenAiDialect();

	@Override
	public DialectId id() {
		return DialectId.AZURE_OPENAI;
	}

	@Override
	public String model(URI uri, JsonNode body) {
		List<String> segments = PathSegments.of(uri);
		int index = segments.indexOf("deployments");
		if (index >= 0 && index + 1 < segments.size()) {
			return segments.get(index + 1);
		}
		return super.model(uri, body);
	}

}
