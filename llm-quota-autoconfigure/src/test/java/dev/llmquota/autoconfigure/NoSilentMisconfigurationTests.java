package dev.llmquota.autoconfigure;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.llmquota.client.restclient.LlmQuotaRestClientCustomizer;
import dev.llmquota.client.webclient.LlmQuotaWebClientCustomizer;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.ProviderSpec;
import dev.llmquota.core.QuotaConfig;
import dev.llmquota.core.QuotaEngine;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.restclient.RestTemplateBuilder;
import org.springframework.boot.restclient.autoconfigure.RestClientAutoConfiguration;
import org.springframework.boot.restclient.autoconfigure.RestTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.webclient.autoconfigure.WebClientAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every mistake a new user makes in the first hour either stops start-up with a message
 * naming the property and the fix, or logs one warning: none passes in silence.
 */
@ExtendWith(OutputCaptureExtension.class)
class NoSilentMisconfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LlmQuotaAutoConfiguration.class));

	@Test
	void aMistypedKeyStopsStartUpNamingTheKeyMeant() {
		this.runner
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com",
					"llm.quota.providers.openai.models.gpt-4o.tokens-per-min=30000")
			.run((context) -> {
				FailureAnalysis analysis = LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure());
				assertThat(analysis.getDescription())
					.contains("unknown property llm.quota.providers.openai.models.gpt-4o.tokens-per-min")
					.contains("did you mean llm.quota.providers.openai.models.gpt-4o.tokens-per-minute?");
				assertThat(analysis.getAction()).contains("rename it to");
			});
	}

	@Test
	void aMistypedKeyAtAnyDepthIsFound() {
		this.runner
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com",
					"llm.quota.retry.max-attempt=3")
			.run((context) -> assertThat(
					LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure()).getDescription())
				.contains("did you mean llm.quota.retry.max-attempts?"));
		this.runner.withPropertyValues("llm.quota.provider.openai.base-url=https://api.openai.com")
			.run((context) -> assertThat(
					LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure()).getDescription())
				.contains("did you mean llm.quota.providers.openai.base-url?"));
	}

	/**
	 * Only a value Spring reads as false switches llm-quota off: a mistyped one
	 * ({@code ture}) stops start-up naming the property, where it switched llm-quota, and
	 * every check of its configuration, off in silence; {@code yes}, {@code on} and
	 * {@code 1} are true, as Spring binds them.
	 */
	@ParameterizedTest(name = "llm.quota.enabled={0}")
	@CsvSource(delimiter = '|', textBlock = """
			ture   | failed
			enable | failed
			yes    | on
			on     | on
			1      | on
			TRUE   | on
			false  | off
			off    | off
			no     | off
			0      | off
			""")
	void onlyAFalseValueOfEnabledSwitchesLlmQuotaOff(String value, String expected) {
		this.runner
			.withPropertyValues("llm.quota.enabled=" + value,
					"llm.quota.providers.openai.base-url=https://api.openai.com")
			.run((context) -> {
				switch (expected) {
					case "failed" ->
						assertThat(LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure()).getDescription())
							.contains("llm.quota.enabled")
							.contains(value);
					case "on" -> assertThat(context).hasNotFailed().hasSingleBean(QuotaConfig.class);
					default -> assertThat(context).hasNotFailed().doesNotHaveBean(QuotaConfig.class);
				}
			});
	}

	/**
	 * Spring Boot drops characters other than letters, digits, '-' and '_' from a map key
	 * written without brackets: {@code llama3:8b} bound as {@code llama38b}, a model no
	 * call names, so its limits governed nothing. Start-up stops naming the key and the
	 * way to write it.
	 */
	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|',
			textBlock = """
					llm.quota.providers.ollama.models.llama3:8b.concurrent-requests                | llama3:8b                | llama38b
					llm.quota.providers.ollama.models.meta-llama/llama-3-8b.concurrent-requests    | meta-llama/llama-3-8b    | meta-llamallama-3-8b
					llm.quota.providers.ollama.models.claude-sonnet-4@20250514.concurrent-requests | claude-sonnet-4@20250514 | claude-sonnet-420250514
					llm.quota.providers.ollama.models.modèle.concurrent-requests                   | modèle                   | modle
					""")
	void aModelKeyWhoseCharactersSpringDropsStopsStartUp(String property, String key, String mangled) {
		this.runner
			.withInitializer((context) -> context.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource("application.yml",
						Map.of("llm.quota.providers.ollama.base-url", "http://localhost:11434", property, 2))))
			.run((context) -> {
				FailureAnalysis analysis = LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains(property).contains("'" + mangled + "'");
				assertThat(analysis.getAction()).contains("\"[" + key + "]\"")
					.contains("models[" + key.replace(":", "\\:") + "].concurrent-requests");
			});
		// in brackets it keeps them, and letters of either case, digits, '-' and '_' need
		// none
		this.runner
			.withInitializer((context) -> context.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource("application.yml",
						Map.of("llm.quota.providers.ollama.base-url", "http://localhost:11434",
								"llm.quota.providers.ollama.models[" + key + "].concurrent-requests", 2,
								"llm.quota.providers.ollama.models.My_Model-2.concurrent-requests", 2))))
			.run((context) -> assertThat(context.getBean(QuotaConfig.class).providers().get("ollama").models())
				.containsKeys(key, "My_Model-2"));
	}

	/**
	 * Two entries no call can tell apart (the same base-url, no match-header) stop
	 * start-up: which governed a call was the first of a map whose order changed from run
	 * to run, and with it the limits, books and credentials the call was charged against.
	 */
	@Test
	void twoEntriesNoCallCanTellApartStopStartUp() {
		this.runner
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com",
					"llm.quota.providers.openai-batch.base-url=https://API.openai.com/")
			.run((context) -> {
				FailureAnalysis analysis = LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains("llm.quota.providers.openai-batch.base-url")
					.contains("'openai'");
				assertThat(analysis.getAction()).contains("match-header");
			});
		this.runner
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com",
					"llm.quota.providers.openai-batch.base-url=https://api.openai.com",
					"llm.quota.providers.openai-batch.match-header.name=OpenAI-Project",
					"llm.quota.providers.openai-batch.match-header.value=proj_batch")
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(QuotaConfig.class));
	}

	/**
	 * A credential whose placeholder names a variable that is not set stays the
	 * placeholder's text: it stops start-up naming the property and the variable, where
	 * it was sent on every call and failed at the provider.
	 */
	@Test
	void aCredentialWhosePlaceholderIsNotResolvedStopsStartUp() {
		this.runner
			.withPropertyValues("llm.quota.providers.azure.base-url=https://east.openai.azure.com",
					"llm.quota.providers.azure.headers.api-key=${LLM_QUOTA_TEST_KEY_NOT_SET}")
			.run((context) -> {
				FailureAnalysis analysis = LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains("llm.quota.providers.azure.headers.api-key")
					.contains("${LLM_QUOTA_TEST_KEY_NOT_SET}");
				assertThat(analysis.getAction()).contains("LLM_QUOTA_TEST_KEY_NOT_SET");
			});
		this.runner
			.withPropertyValues("test.key=sk-test", "llm.quota.providers.azure.base-url=https://east.openai.azure.com",
					"llm.quota.providers.azure.headers.api-key=${test.key}")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	/**
	 * Two accounts at one URL, each with its own credentials, are told apart by a route
	 * or the PROVIDER attribute: they start, and one warning says which governs a call
	 * matched by its URL alone (the first configured).
	 */
	@Test
	void twoAccountsAtOneUrlWithTheirOwnCredentialsStartWithAWarning(CapturedOutput output) {
		this.runner
			.withPropertyValues("llm.quota.providers.first.base-url=https://api.anthropic.com",
					"llm.quota.providers.first.headers.x-api-key=first-key",
					"llm.quota.providers.first.models.claude-sonnet-4-5.requests-per-minute=50",
					"llm.quota.providers.second.base-url=https://api.anthropic.com",
					"llm.quota.providers.second.headers.x-api-key=second-key",
					"llm.quota.providers.second.models.claude-sonnet-4-5.requests-per-minute=50",
					"llm.quota.routes.claude.targets[0].provider=first",
					"llm.quota.routes.claude.targets[0].model=claude-sonnet-4-5",
					"llm.quota.routes.claude.targets[1].provider=second",
					"llm.quota.routes.claude.targets[1].model=claude-sonnet-4-5")
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(QuotaConfig.class);
				assertThat(output).contains("llm.quota.providers.second").contains("'first'");
			});
	}

	/**
	 * An empty value of a property that needs one (a placeholder whose variable is unset,
	 * with an empty default) is explained naming the property and the fix, in words.
	 */
	@ParameterizedTest(name = "{0}=")
	@CsvSource({ "llm.quota.enabled, true or false", "llm.quota.max-pools, 500" })
	void anEmptyValueIsExplained(String property, String example) {
		this.runner
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com",
					property + "=${LLM_QUOTA_TEST_UNSET:}")
			.run((context) -> {
				FailureAnalysis analysis = LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains(property).doesNotContain("not a int");
				assertThat(analysis.getAction()).contains(property).contains(example);
			});
	}

	@Test
	void aModelIdWithDotsOutsideBracketsIsExplained() {
		this.runner
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com",
					"llm.quota.providers.openai.models.gpt-4.1.tokens-per-minute=30000")
			.run((context) -> assertThat(
					LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure()).getDescription())
				.contains("holds dots")
				.contains("llm.quota.providers.openai.models[gpt-4.1].tokens-per-minute"));
	}

	@Test
	void aKeyFarFromAnyListsTheValidOnes() {
		this.runner
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com",
					"llm.quota.providers.openai.models.gpt-4o.colour=blue")
			.run((context) -> assertThat(
					LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure()).getAction())
				.contains("remove it")
				.contains("tokens-per-minute")
				.contains("default-max-tokens"));
	}

	@ParameterizedTest(name = "{0} -> {1}")
	@CsvSource(delimiter = '|', textBlock = """
			https://api.openai.com                                               | openai
			https://contoso-eus2.openai.azure.com                                | azure-openai
			https://api.anthropic.com                                            | anthropic
			https://bedrock-runtime.eu-central-1.amazonaws.com                   | bedrock
			https://generativelanguage.googleapis.com                            | gemini
			https://europe-west4-aiplatform.googleapis.com                       | gemini
			http://localhost:11434                                               | ollama
			http://localhost:11434/v1                                            | openai
			https://generativelanguage.googleapis.com/v1beta/openai              | openai
			""")
	void theDialectIsInferredFromTheBaseUrl(String baseUrl, String dialect, CapturedOutput output) {
		this.runner.withPropertyValues("llm.quota.providers.entry.base-url=" + baseUrl).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(QuotaConfig.class).providers().get("entry").dialect()).isEqualTo(dialect);
		});
		assertThat(output).doesNotContain("sets no dialect");
	}

	/**
	 * A model without a price spends nothing of its entry's budget: one listed so is
	 * named at start-up, and an unlisted one (a typo, a new snapshot) when first called,
	 * rather than passing the cap in silence.
	 */
	@Test
	void aBudgetedEntrysModelWithoutAPriceIsNamedInAWarning(CapturedOutput output) {
		this.runner
			.withPropertyValues("llm.quota.providers.budgeted.base-url=https://api.openai.com",
					"llm.quota.providers.budgeted.budget.per-day=1.00",
					"llm.quota.providers.budgeted.models.gpt-4o.cost.input-per-million=10",
					"llm.quota.providers.budgeted.models.gpt-4o.cost.output-per-million=30",
					"llm.quota.providers.budgeted.models.gpt-4o-mini.requests-per-minute=500")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("llm.quota.providers.budgeted.models.gpt-4o-mini")
					.contains("budget")
					.doesNotContain("'gpt-4.1'");
				QuotaEngine engine = context.getBean(QuotaEngine.class);
				engine.pool("budgeted", "gpt-4.1");
				engine.pool("budgeted", "gpt-4.1-mini");
				// one warning an entry: model ids come from callers
				assertThat(output).containsOnlyOnce("'gpt-4.1'").doesNotContain("'gpt-4.1-mini'");
			});
	}

	@Test
	void aUrlThatDoesNotTellIsReadAsOpenAiWithOneWarningNamingTheEntry(CapturedOutput output) {
		this.runner.withPropertyValues("llm.quota.providers.gateway.base-url=https://llm.internal.example.com")
			.run((context) -> assertThat(context.getBean(QuotaConfig.class).providers().get("gateway").dialect())
				.isEqualTo("openai"));
		assertThat(output).containsOnlyOnce("llm-quota: provider entry llm.quota.providers.gateway sets no dialect")
			.contains("llm.quota.providers.gateway.dialect");
	}

	@Test
	void aDialectContradictingTheProvidersOwnHostStopsStartUp() {
		this.runner
			.withPropertyValues("llm.quota.providers.anthropic.base-url=https://api.anthropic.com",
					"llm.quota.providers.anthropic.dialect=openai")
			.run((context) -> {
				FailureAnalysis analysis = LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains("llm.quota.providers.anthropic.dialect")
					.contains("serves the anthropic dialect, not openai");
				assertThat(analysis.getAction()).contains("set it to anthropic");
			});
		// an OpenAI-compatible path of a provider's host is openai's
		this.runner
			.withPropertyValues("llm.quota.providers.ollama.base-url=http://localhost:11434/v1",
					"llm.quota.providers.ollama.dialect=openai")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void dialectsWithOnePublicHostNeedNoBaseUrl() {
		this.runner
			.withPropertyValues("llm.quota.providers.claude.dialect=anthropic",
					"llm.quota.providers.flash.dialect=gemini")
			.run((context) -> {
				QuotaConfig config = context.getBean(QuotaConfig.class);
				assertThat(config.providers().get("claude").baseUrl()).hasToString("https://api.anthropic.com");
				assertThat(config.providers().get("flash").baseUrl())
					.hasToString("https://generativelanguage.googleapis.com");
			});
		this.runner.withPropertyValues("llm.quota.providers.azure.dialect=azure-openai").run((context) -> {
			FailureAnalysis analysis = LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure());
			assertThat(analysis.getDescription()).contains("llm.quota.providers.azure.base-url");
			assertThat(analysis.getAction()).contains("https://<resource>.openai.azure.com");
		});
	}

	@Test
	void pricesTakeTheirContractNamesAndTheShortOnesAsAliases() {
		this.runner
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com",
					"llm.quota.providers.openai.models.a.cost.input-per-million=2.50",
					"llm.quota.providers.openai.models.a.cost.output-per-million=10",
					"llm.quota.providers.openai.models.a.cost.cached-input-per-million=1.25",
					"llm.quota.providers.openai.models.b.cost.input=0.15",
					"llm.quota.providers.openai.models.b.cost.output=0.60")
			.run((context) -> {
				ProviderSpec openai = context.getBean(QuotaConfig.class).providers().get("openai");
				assertThat(openai.models()
					.get("a")
					.accounting()
					.cost()
					.micros(new dev.llmquota.core.Usage(1_000_000, 1_000_000, 1_000_000)))
					.isEqualTo(1_250_000 + 10_000_000);
				assertThat(openai.models().get("b").accounting().cost()).isNotNull();
			});
		this.runner
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com",
					"llm.quota.providers.openai.models.a.cost.input-per-million=2.50",
					"llm.quota.providers.openai.models.a.cost.input=3.00",
					"llm.quota.providers.openai.models.a.cost.output-per-million=10")
			.run((context) -> assertThat(
					LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure()).getDescription())
				.contains("llm.quota.providers.openai.models.a.cost.input")
				.contains("short name of"));
	}

	@Test
	void aBudgetNoPriceCanTripStopsStartUp() {
		this.runner
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com",
					"llm.quota.providers.openai.budget.per-day=50",
					"llm.quota.providers.openai.models.gpt-4o.requests-per-minute=500")
			.run((context) -> {
				FailureAnalysis analysis = LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains("llm.quota.providers.openai.budget.per-day")
					.contains("can never trip");
				assertThat(analysis.getAction()).contains("cost.input-per-million");
			});
		this.runner
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com",
					"llm.quota.providers.openai.budget.per-day=50",
					"llm.quota.providers.openai.models.default.cost.input-per-million=1",
					"llm.quota.providers.openai.models.default.cost.output-per-million=2")
			.run((context) -> assertThat(context.getBean(QuotaConfig.class).providers().get("openai").account().asMap())
				.containsKey(Dimension.BUDGET_PER_DAY));
	}

	@ParameterizedTest(name = "{0}={1}")
	@CsvSource(delimiter = '|', textBlock = """
			llm.quota.providers.openai.models.gpt-4o.expected-latency | 1.4s      | 1400ms
			llm.quota.providers.openai.models.gpt-4o.expected-latency | 1.4s      | PT1.4S
			llm.quota.max-wait                                        | 2.5m      | 30s
			llm.quota.health.exhausted-status                         | degraded  | out-of-service
			llm.quota.providers.openai.charge-refused                 | always    | requests
			llm.quota.providers.openai.dialect                        | gpt       | azure-openai
			llm.quota.providers.openai.day-zone                       | Pacific   | America/Los_Angeles
			""")
	void aValueOfTheWrongFormIsExplainedWithTheFormsAccepted(String property, String value, String accepted) {
		this.runner
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com", property + "=" + value)
			.run((context) -> {
				FailureAnalysis analysis = LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains("Invalid value '" + value + "' for " + property);
				assertThat(analysis.getAction()).contains(property).contains(accepted);
			});
	}

	/**
	 * A duration written as a bare number is milliseconds to Spring Boot: {@code
	 * lease-timeout: 600}, meant as seconds, gave every call's slots back after 0.6 s,
	 * and {@code retry.max-backoff: 60} failed every 429 that asked to wait more than 60
	 * ms. The README documents durations with their unit: a bare number stops start-up
	 * (but 0, the same in any unit).
	 */
	@ParameterizedTest(name = "{0}={1}")
	@CsvSource(delimiter = '|', textBlock = """
			llm.quota.max-wait                                        | 30
			llm.quota.lease-timeout                                   | 600
			llm.quota.retry.max-backoff                               | 60
			llm.quota.providers.openai.burst-window                   | 2
			llm.quota.providers.openai.models.gpt-4o.expected-latency | 2
			""")
	void aDurationWithoutItsUnitStopsStartUp(String property, String value) {
		this.runner
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com", property + "=" + value)
			.run((context) -> {
				FailureAnalysis analysis = LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains("Invalid value '" + value + "' for " + property)
					.contains("milliseconds");
				assertThat(analysis.getAction()).contains(value + "s");
			});
		this.runner
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com",
					property + "=" + value + "s")
			.run((context) -> assertThat(context).hasNotFailed());
		// behind a placeholder's default too
		this.runner
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com",
					property + "=${LLM_QUOTA_TEST_UNSET:" + value + "}")
			.run((context) -> assertThat(
					LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure()).getDescription())
				.contains(property)
				.contains("milliseconds"));
	}

	/**
	 * Redis settings with the local store (the default backend) are not used: one warning
	 * says so, naming the property and the backend that would use it.
	 */
	@Test
	void redisSettingsWithTheLocalStoreAreNamedInAWarning(CapturedOutput output) {
		this.runner
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com",
					"llm.quota.redis.timeout=1s")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("llm.quota.redis.timeout").contains("llm.quota.backend=redis");
			});
	}

	/**
	 * A route's target names a model by the key its entry lists it under (what the user
	 * wrote a few lines above): the calls go out with the model's id, its name, not the
	 * key, which the provider would refuse as an unknown model.
	 */
	@Test
	void aRouteTargetNamingAModelsKeySendsItsId() {
		this.runner
			.withPropertyValues("llm.quota.providers.east.base-url=https://east.openai.azure.com",
					"llm.quota.providers.east.models.mini.name=gpt-4o-mini-2024-07-18",
					"llm.quota.providers.east.models.mini.requests-per-minute=60",
					"llm.quota.routes.gpt4o.targets[0].provider=east", "llm.quota.routes.gpt4o.targets[0].model=mini")
			.run((context) -> assertThat(
					context.getBean(dev.llmquota.client.LlmQuotaCalls.class).routes().get(0).targets().get(0).model())
				.isEqualTo("gpt-4o-mini-2024-07-18"));
	}

	/**
	 * The template of unlisted models is {@code default} in any case ({@code Default:}
	 * was a model of that name, and unlisted models went ungoverned); a name or aliases
	 * on it, which it cannot use (each unlisted model keeps its own id), stop start-up.
	 */
	@Test
	void theTemplateIsTheTemplateInAnyCaseAndTakesNoName() {
		this.runner
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com",
					"llm.quota.providers.openai.models.Default.requests-per-minute=100")
			.run((context) -> {
				ProviderSpec openai = context.getBean(QuotaConfig.class).providers().get("openai");
				assertThat(openai.template()).isPresent();
				assertThat(openai.models()).doesNotContainKey("Default");
			});
		this.runner
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com",
					"llm.quota.providers.openai.models.default.name=gpt-4o",
					"llm.quota.providers.openai.models.default.requests-per-minute=100")
			.run((context) -> assertThat(
					LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure()).getDescription())
				.contains("llm.quota.providers.openai.models.default.name"));
	}

	@Test
	void lendAftersMessageQuotesItsOwnDefault() {
		this.runner
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com",
					"llm.quota.priority.lend-after=-1s")
			.run((context) -> assertThat(
					LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure()).getAction())
				.contains("10s (the default)")
				.doesNotContain("30s"));
	}

	@Test
	void anApplicationsOwnBuilderBeansAreNamedWithTheLineThatGovernsThem(CapturedOutput output) {
		this.runner
			.withConfiguration(AutoConfigurations.of(LlmQuotaWebClientAutoConfiguration.class,
					LlmQuotaRestClientAutoConfiguration.class, WebClientAutoConfiguration.class,
					RestClientAutoConfiguration.class, RestTemplateAutoConfiguration.class))
			.withUserConfiguration(OwnBuilders.class)
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).containsOnlyOnce("WebClient.Builder bean 'myWebClientBuilder'")
					.contains("llmQuotaWebClientCustomizer.customize(builder)")
					.containsOnlyOnce("RestClient.Builder bean 'myRestClientBuilder'")
					.contains("llmQuotaRestClientCustomizer.customize(builder)")
					.containsOnlyOnce("RestTemplate bean 'myRestTemplate'")
					.contains("llmQuotaRestTemplateCustomizer.customize(restTemplate)")
					.doesNotContain("'builtRestTemplate'")
					.doesNotContain("'governedWebClientBuilder'")
					.doesNotContain("'governedRestClientBuilder'");
			});
	}

	@Test
	void boot_sOwnBuildersRaiseNoWarning(CapturedOutput output) {
		this.runner
			.withConfiguration(AutoConfigurations.of(LlmQuotaWebClientAutoConfiguration.class,
					LlmQuotaRestClientAutoConfiguration.class, WebClientAutoConfiguration.class,
					RestClientAutoConfiguration.class))
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com")
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).doesNotContain("is the application's own");
	}

	@Test
	void oneSummaryLinePerEntryWithDialectRegionModelsClientsAndStore() {
		this.runner
			.withConfiguration(AutoConfigurations.of(LlmQuotaWebClientAutoConfiguration.class,
					LlmQuotaRestClientAutoConfiguration.class, WebClientAutoConfiguration.class,
					RestClientAutoConfiguration.class))
			.withPropertyValues("llm.quota.providers.bedrock.base-url=https://bedrock-runtime.us-east-1.amazonaws.com",
					"llm.quota.providers.bedrock.region=us-east-1",
					"llm.quota.providers.bedrock.models.sonnet.name=us.anthropic.claude-sonnet-4-5-20250929-v1:0",
					"llm.quota.providers.bedrock.models.sonnet.tokens-per-minute=200000",
					"llm.quota.providers.local.base-url=http://localhost:11434",
					"llm.quota.providers.local.dialect=ollama",
					"llm.quota.providers.local.models.llama.name=llama3.2:1b",
					"llm.quota.providers.local.models.llama.concurrent-requests=2")
			.run((context) -> {
				List<String> lines = context.getBean(StartupSummary.class).lines();
				assertThat(lines).hasSize(2);
				assertThat(lines.get(0)).startsWith("llm-quota: provider 'bedrock'")
					.contains("dialect bedrock (inferred from base-url)")
					.contains("region us-east-1")
					.contains("us.anthropic.claude-sonnet-4-5-20250929-v1:0 [tokens-per-minute=200000]")
					.contains("governs WebClient, RestClient")
					.contains("store local");
				assertThat(lines.get(1)).startsWith("llm-quota: provider 'local'")
					.contains("dialect ollama,")
					.doesNotContain("inferred")
					.contains("llama3.2:1b [concurrent-requests=2]");
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnBuilders {

		@Bean
		WebClient.Builder myWebClientBuilder() {
			return WebClient.builder();
		}

		@Bean
		RestClient.Builder myRestClientBuilder() {
			return RestClient.builder();
		}

		@Bean
		WebClient.Builder governedWebClientBuilder(LlmQuotaWebClientCustomizer customizer) {
			WebClient.Builder builder = WebClient.builder();
			customizer.customize(builder);
			return builder;
		}

		@Bean
		RestClient.Builder governedRestClientBuilder(LlmQuotaRestClientCustomizer customizer) {
			RestClient.Builder builder = RestClient.builder();
			customizer.customize(builder);
			return builder;
		}

		@Bean
		RestTemplate myRestTemplate() {
			return new RestTemplate();
		}

		@Bean
		RestTemplate builtRestTemplate(RestTemplateBuilder builder) {
			return builder.build();
		}

	}

	/**
	 * Environment variables bind as Spring Boot binds them (LLM_QUOTA_MAX_WAIT is
	 * llm.quota.max-wait, and a model's id is its letters and digits): they are not
	 * refused as unknown keys, nor renamed to another dimension.
	 */
	@Test
	void anEnvironmentVariableSpringBootBindsIsTaken() {
		this.runner.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com")
			.withInitializer(
					(context) -> context.getEnvironment()
						.getPropertySources()
						.addFirst(new SystemEnvironmentPropertySource(
								StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
								Map.of("LLM_QUOTA_MAX_WAIT", "5s",
										"LLM_QUOTA_PROVIDERS_OPENAI_MODELS_GPT4O_TOKENS_PER_MINUTE", "30000"))))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				LlmQuotaProperties properties = context.getBean(LlmQuotaProperties.class);
				assertThat(properties.getMaxWait()).isEqualTo(Duration.ofSeconds(5));
				assertThat(properties.getProviders().get("openai").getModels().get("gpt4o").getTokensPerMinute())
					.isEqualTo(30_000L);
			});
	}

	/**
	 * A mistyped variable under LLM_QUOTA_ sets nothing: a warning names it, never its
	 * value (a variable may hold a key). It does not stop start-up, since an application
	 * may read a variable of that name itself; nor do one a placeholder names, an empty
	 * one, or those Kubernetes sets for a Service named llm-quota.
	 */
	@Test
	void aMistypedEnvironmentVariableIsNamedInAWarning(CapturedOutput output) {
		withVariables(Map.of("LLM_QUOTA_MAX_WIAT", "5s")).run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).contains("The environment variable LLM_QUOTA_MAX_WIAT sets no property under llm.quota")
			.contains("LLM_QUOTA_MAX_WAIT for llm.quota.max-wait")
			.doesNotContain("5s");
		withVariables(Map.of("LLM_QUOTA_OPENAI_KEY", "sk-test", "LLM_QUOTA_MAX_WAIT", "", "LLM_QUOTA_SERVICE_HOST",
				"10.0.0.11", "LLM_QUOTA_SERVICE_PORT", "8080", "LLM_QUOTA_PORT", "tcp://10.0.0.11:8080",
				"LLM_QUOTA_PORT_8080_TCP_ADDR", "10.0.0.11"))
			.withPropertyValues("llm.quota.providers.openai.headers.authorization=Bearer ${LLM_QUOTA_OPENAI_KEY}")
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).doesNotContain("LLM_QUOTA_OPENAI_KEY sets")
			.doesNotContain("LLM_QUOTA_MAX_WAIT sets")
			.doesNotContain("LLM_QUOTA_SERVICE")
			.doesNotContain("LLM_QUOTA_PORT");
	}

	/**
	 * LLM_QUOTA_PROVIDERS_OPENAI_HEADERS_API_KEY is what a user writes for
	 * headers.api-key, but Spring Boot binds a map key's underscores as dots: the entry's
	 * credential would go out as a header named api.key, which no provider reads, in
	 * silence.
	 */
	@Test
	void aCredentialHeaderSetByAnEnvironmentVariableStopsStartUpNamingTheVariable() {
		withVariables(Map.of("LLM_QUOTA_PROVIDERS_OPENAI_HEADERS_API_KEY", "secret")).run((context) -> {
			assertThat(context).hasFailed();
			FailureAnalysis analysis = LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure());
			assertThat(analysis.getDescription()).contains("LLM_QUOTA_PROVIDERS_OPENAI_HEADERS_API_KEY")
				.contains("llm.quota.providers.openai.headers.api.key")
				.doesNotContain("secret");
			assertThat(analysis.getAction())
				.contains("llm.quota.providers.openai.headers.api-key: ${LLM_QUOTA_PROVIDERS_OPENAI_HEADERS_API_KEY}");
		});
		withVariables(Map.of("LLM_QUOTA_PROVIDERS_OPENAI_HEADERS_AUTHORIZATION", "Bearer secret"))
			.run((context) -> assertThat(context).hasNotFailed());
		// the fix the message gives: the variable, still bound by Spring Boot as api.key
		// too, is read through the placeholder, and that copy is not sent
		withVariables(Map.of("LLM_QUOTA_PROVIDERS_OPENAI_HEADERS_API_KEY", "secret"))
			.withPropertyValues(
					"llm.quota.providers.openai.headers.api-key=${LLM_QUOTA_PROVIDERS_OPENAI_HEADERS_API_KEY}")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(LlmQuotaProperties.class).getProviders().get("openai").getHeaders())
					.containsOnlyKeys("api-key");
			});
	}

	private ApplicationContextRunner withVariables(Map<String, Object> variables) {
		return this.runner.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com")
			.withInitializer((context) -> context.getEnvironment()
				.getPropertySources()
				.addFirst(new SystemEnvironmentPropertySource(
						StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, variables)));
	}

	/**
	 * A bracketed numeric id (an Azure deployment named by a number) is no list item:
	 * only a list's first item, [0], is taken for one.
	 */
	@Test
	void aBracketedNumericModelIdStarts() throws IOException {
		String yaml = """
				llm:
				  quota:
				    providers:
				      azure:
				        base-url: https://example.openai.azure.com
				        models:
				          "[2024]": { requests-per-minute: 10 }
				""";
		List<PropertySource<?>> sources = new YamlPropertySourceLoader().load("application.yml",
				new ByteArrayResource(yaml.getBytes(StandardCharsets.UTF_8)));
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LlmQuotaAutoConfiguration.class))
			.withInitializer((context) -> sources.forEach(context.getEnvironment().getPropertySources()::addFirst))
			.run((context) -> assertThat(context).hasNotFailed());
	}

	/**
	 * A mistyped key with more keys below it meant a property that takes them: models,
	 * not mode (an enum), which following the advice would only trade for another error.
	 */
	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|',
			textBlock = """
					llm.quota.providers.openai.model.gpt-4o.requests-per-minute  | llm.quota.providers.openai.models.gpt-4o.requests-per-minute
					llm.quota.providers.openai.modles.gpt-4o.requests-per-minute | llm.quota.providers.openai.models.gpt-4o.requests-per-minute
					""")
	void aMistypedMapKeySuggestsTheMapNotAValueNextToIt(String typo, String meant) {
		this.runner.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com", typo + "=500")
			.run((context) -> {
				FailureAnalysis analysis = LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains("did you mean " + meant + "?");
				assertThat(analysis.getAction()).doesNotContain("openai.mode.gpt-4o");
			});
	}

	/**
	 * A limit of a period llm-quota has no dimension for is not renamed to another
	 * period's: followed, the advice would make 10 a second 10 a day.
	 */
	@Test
	void aLimitOfAnotherPeriodIsNotRenamedToADimensionThatCountsOtherwise() {
		this.runner
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com",
					"llm.quota.providers.openai.models.gpt-4o.requests-per-second=10")
			.run((context) -> {
				FailureAnalysis analysis = LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains("requests-per-second");
				assertThat(analysis.getAction())
					.doesNotContain("rename it to llm.quota.providers.openai.models.gpt-4o.requests-per-day");
			});
	}

	/**
	 * A value where llm-quota takes properties below it (a model listed with no limits, a
	 * list of model names, a budget written as a number) names the property and the fix,
	 * not Spring's "no converter found".
	 */
	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "models:\n          gpt-4o:\n", "models: [gpt-4o, gpt-4o-mini]\n", "budget: 50\n" })
	void aValueWhereLlmQuotaTakesPropertiesIsExplained(String tail) throws IOException {
		String yaml = "llm:\n  quota:\n    providers:\n      openai:\n        base-url: https://api.openai.com\n        "
				+ tail;
		List<PropertySource<?>> sources = new YamlPropertySourceLoader().load("application.yml",
				new ByteArrayResource(yaml.getBytes(StandardCharsets.UTF_8)));
		this.runner
			.withInitializer((context) -> sources.forEach(context.getEnvironment().getPropertySources()::addFirst))
			.run((context) -> {
				if (context.getStartupFailure() == null) {
					// Spring Boot 4.1 binds an entry with nothing below it as an empty
					// one:
					// a model without limits, as gpt-4o: {} is on either version
					assertThat(tail).startsWith("models:\n          gpt-4o:\n");
					assertThat(context.getBean(LlmQuotaProperties.class).getProviders().get("openai").getModels())
						.containsKey("gpt-4o");
					return;
				}
				FailureAnalysis analysis = LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains("llm.quota.providers.openai")
					.contains("takes properties below it");
				assertThat(analysis.getAction()).contains("gpt-4o: {}");
			});
	}

	/**
	 * A budget below a millionth of the currency, which budgets count in, would be none:
	 * start-up stops naming it, not with core's "must be positive".
	 */
	@Test
	void aBudgetBelowAMillionthNamesItsProperty() {
		this.runner
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com",
					"llm.quota.providers.openai.budget.per-day=0.0000001",
					"llm.quota.providers.openai.models.default.cost.input-per-million=1",
					"llm.quota.providers.openai.models.default.cost.output-per-million=1")
			.run((context) -> assertThat(
					LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure()).getDescription())
				.contains("llm.quota.providers.openai.budget.per-day"));
	}

	/**
	 * A map written as a YAML list is explained as one, not as a key holding dots: a list
	 * of providers fails to bind, and a list of models would bind as the model "0", which
	 * no call names.
	 */
	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "providers:\n      - openai:\n          base-url: https://api.openai.com\n",
			"providers:\n      openai:\n        base-url: https://api.openai.com\n        models:\n"
					+ "          - requests-per-minute: 500\n" })
	void aMapWrittenAsAListIsExplained(String tail) throws IOException {
		String yaml = "llm:\n  quota:\n    " + tail;
		List<PropertySource<?>> sources = new YamlPropertySourceLoader().load("application.yml",
				new ByteArrayResource(yaml.getBytes(StandardCharsets.UTF_8)));
		this.runner
			.withInitializer((context) -> sources.forEach(context.getEnvironment().getPropertySources()::addFirst))
			.run((context) -> {
				FailureAnalysis analysis = LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains("is a map of entries by id, not a list")
					.doesNotContain("holds dots");
			});
	}

}
