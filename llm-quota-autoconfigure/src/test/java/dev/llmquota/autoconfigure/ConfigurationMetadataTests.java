package dev.llmquota.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The IDE metadata users get for {@code llm.quota.*}.
 */
class ConfigurationMetadataTests {

	@Test
	void everyPropertyHasADescriptionForTheIde() throws IOException {
		List<Map<String, Object>> properties = JsonPath.read(metadata(), "$.properties[*]");
		assertThat(properties).extracting((property) -> property.get("name"))
			.contains("llm.quota.enabled", "llm.quota.headroom", "llm.quota.max-wait", "llm.quota.lease-timeout",
					"llm.quota.max-pools", "llm.quota.providers");
		assertThat(properties).allSatisfy(
				(property) -> assertThat(property.get("description")).as("description of %s", property.get("name"))
					.isNotNull());
	}

	@Test
	void providerIdsHaveValueHints() throws IOException {
		List<String> values = JsonPath.read(metadata(),
				"$.hints[?(@.name == 'llm.quota.providers.keys')].values[*].value");
		assertThat(values).contains("openai", "azure-openai", "anthropic", "bedrock", "gemini", "ollama");
	}

	private static String metadata() throws IOException {
		try (InputStream in = ConfigurationMetadataTests.class.getClassLoader()
			.getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
			assertThat(in).as("generated metadata").isNotNull();
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
	}

}
