package dev.llmquota.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.llmquota.store.EmbeddedRedis;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every {@code llm.quota} example of the README starts an application as it is written: a
 * user copies them.
 */
class ReadmeExamplesTests {

	private static final Pattern YAML = Pattern.compile("```yaml\\n(llm:\\n.*?)```", Pattern.DOTALL);

	// an example that shares its books in Redis finds one where the application's
	// spring.data.redis settings would point
	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(DataRedisAutoConfiguration.class, DataRedisReactiveAutoConfiguration.class,
						LlmQuotaRedisAutoConfiguration.class, LlmQuotaAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=127.0.0.1",
				"spring.data.redis.port=" + EmbeddedRedis.shared().port(),
				// the variables the examples' placeholders name
				"AZURE_EAST_KEY=east", "AZURE_SWEDEN_KEY=sweden", "OPENAI_API_KEY=openai");

	@ParameterizedTest(name = "README.md line {0}")
	@MethodSource("examples")
	void anExampleStartsAsItIsWritten(int line, String yaml) {
		List<PropertySource<?>> sources;
		try {
			sources = new YamlPropertySourceLoader().load("README.md line " + line,
					new ByteArrayResource(yaml.getBytes(StandardCharsets.UTF_8)));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		this.runner
			.withInitializer((context) -> sources.forEach(context.getEnvironment().getPropertySources()::addFirst))
			.run((context) -> assertThat(context).hasNotFailed());
	}

	static List<Arguments> examples() throws IOException {
		String readme = Files.readString(Path.of("../README.md"), StandardCharsets.UTF_8);
		List<Arguments> examples = new ArrayList<>();
		Matcher matcher = YAML.matcher(readme);
		while (matcher.find()) {
			int line = readme.substring(0, matcher.start(1)).split("\n", -1).length;
			examples.add(Arguments.of(line, matcher.group(1)));
		}
		assertThat(examples).as("the README's examples").hasSizeGreaterThan(5);
		return examples;
	}

}
