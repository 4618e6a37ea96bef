package dev.llmquota.autoconfigure;

import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import javax.xml.parsers.DocumentBuilderFactory;

import dev.llmquota.client.anthropic.LlmQuotaAnthropicInterceptor;
import dev.llmquota.client.aws.LlmQuotaAwsHttpClients;
import dev.llmquota.client.langchain4j.LlmQuotaHttpClientBuilder;
import dev.llmquota.client.okhttp.LlmQuotaOkHttpInterceptor;
import dev.llmquota.client.restclient.LlmQuotaRestClientCustomizer;
import dev.llmquota.client.restclient.LlmQuotaRestTemplateCustomizer;
import dev.llmquota.client.webclient.LlmQuotaWebClientCustomizer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The client libraries of other ecosystems are optional: with any one of them absent, the
 * application starts and every other client stays governed; and none of them is a runtime
 * dependency a user of the starter would get.
 */
class OptionalClientLibrariesTests {

	/** Group ids of libraries llm-quota adapts to but never brings. */
	private static final Set<String> OPTIONAL_GROUPS = Set.of("dev.langchain4j", "com.squareup.okhttp3",
			"org.springframework.ai", "org.apache.httpcomponents.client5", "com.anthropic", "com.openai",
			"software.amazon.awssdk", "com.google.genai");

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(LlmQuotaAutoConfiguration.class, LlmQuotaWebClientAutoConfiguration.class,
						LlmQuotaRestClientAutoConfiguration.class, LlmQuotaOkHttpAutoConfiguration.class,
						LlmQuotaLangChain4jAutoConfiguration.class, LlmQuotaSdkAutoConfiguration.class))
		.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com");

	@ParameterizedTest
	@ValueSource(strings = { "dev.langchain4j", "okhttp3", "org.apache.hc", "org.springframework.ai", "com.anthropic",
			"software.amazon.awssdk", "com.google.genai" })
	void withOneClientLibraryAbsentTheApplicationStartsAndTheOthersStayGoverned(String absent) {
		this.runner.withClassLoader(new FilteredClassLoader(absent)).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).hasSingleBean(LlmQuotaWebClientCustomizer.class)
				.hasSingleBean(LlmQuotaRestClientCustomizer.class)
				.hasSingleBean(LlmQuotaRestTemplateCustomizer.class);
			assertThat(context.getBeansOfType(LlmQuotaHttpClientBuilder.class))
				.hasSize(absent.equals("dev.langchain4j") ? 0 : 1);
			assertThat(context.getBeansOfType(LlmQuotaOkHttpInterceptor.class))
				.hasSize(absent.equals("okhttp3") ? 0 : 1);
			assertThat(context.getBeansOfType(LlmQuotaAnthropicInterceptor.class))
				.hasSize(absent.equals("com.anthropic") ? 0 : 1);
			assertThat(context.getBeansOfType(LlmQuotaAwsHttpClients.class))
				.hasSize(absent.equals("software.amazon.awssdk") ? 0 : 1);
		});
	}

	/**
	 * The module's own build file: every dependency on a client library is optional or
	 * for tests only, so the starter's runtime dependency tree lists none of them.
	 */
	@Test
	void noClientLibraryIsARuntimeDependencyOfTheStarter() throws Exception {
		Path pom = Path.of(System.getProperty("basedir", "")).toAbsolutePath().resolve("pom.xml");
		Element project = DocumentBuilderFactory.newInstance()
			.newDocumentBuilder()
			.parse(new File(pom.toString()))
			.getDocumentElement();
		Element dependencies = (Element) project.getElementsByTagName("dependencies").item(0);
		NodeList declared = dependencies.getElementsByTagName("dependency");
		List<String> forced = new ArrayList<>();
		int clients = 0;
		for (int i = 0; i < declared.getLength(); i++) {
			Element dependency = (Element) declared.item(i);
			String group = text(dependency, "groupId");
			if (!OPTIONAL_GROUPS.contains(group)) {
				continue;
			}
			clients++;
			boolean optional = "true".equals(text(dependency, "optional"));
			boolean testOnly = "test".equals(text(dependency, "scope"));
			if (!optional && !testOnly) {
				forced.add(group + ":" + text(dependency, "artifactId"));
			}
		}
		assertThat(clients).as("client libraries the module adapts to").isGreaterThanOrEqualTo(4);
		assertThat(forced).as("client libraries a user would get with the starter").isEmpty();
	}

	private static String text(Element element, String tag) {
		NodeList nodes = element.getElementsByTagName(tag);
		return (nodes.getLength() > 0) ? nodes.item(0).getTextContent().trim() : null;
	}

}
