package dev.llmquota.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Bad configuration stops start-up with a message naming the property and the fix.
 */
class InvalidConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LlmQuotaAutoConfiguration.class))
		.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com");

	@ParameterizedTest(name = "{0}={1}")
	@CsvSource(delimiter = '|', textBlock = """
			llm.quota.headroom                                          | 1.5       | 0.8
			llm.quota.headroom                                          | 0.0       | 0.8
			llm.quota.max-wait                                          | -1s       | 30s
			llm.quota.lease-timeout                                     | 0s        | 10m
			llm.quota.max-pools                                         | 0         | 1000
			llm.quota.providers.openai.base-url                         | api.openai.com | https://api.openai.com
			llm.quota.providers.openai.base-url                         | https://exa mple.com | https://api.openai.com
			llm.quota.providers.openai.burst-window                     | 0s        | 2s
			llm.quota.providers.openai.day-zone                         | Mars/Base | UTC
			llm.quota.providers.openai.account.tokens-per-minute        | -5        | remove the property
			llm.quota.providers.openai.models.gpt-4o.requests-per-minute | -500     | remove the property
			llm.quota.providers.openai.models.gpt-4o.burst-window       | 0ms       | 2s
			llm.quota.providers.openai.models.gpt-4o.output-burndown    | 0         | 1
			llm.quota.providers.openai.models.gpt-4o.expected-latency   | 0s        | 2s
			llm.quota.providers.openai.models.gpt-4o.default-max-tokens | 0         | 4096
			llm.quota.providers.openai.models.gpt-4o.tokenizer          | chars:4000 | chars:4
			llm.quota.providers.openai.models.gpt-4o.tokenizer          | chars:0.01 | chars:4
			llm.quota.providers.openai.match-header.name                | OpenAI-Project: | OpenAI-Project
			llm.quota.providers.openai.region                           | ''        | eastus
			llm.quota.providers.openai.models.gpt-4o.aliases[0]         | ''        | gpt-4o-2024-08-06
			""")
	void stopsStartUpNamingThePropertyAndTheFix(String property, String value, String example) {
		this.runner.withPropertyValues(property + "=" + value).run((context) -> {
			assertThat(context).hasFailed();
			FailureAnalysis analysis = LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure());
			assertThat(analysis.getDescription()).contains("Invalid value '" + value.trim().replace("0ms", "0s") + "'")
				.contains(property);
			assertThat(analysis.getAction()).contains(property).contains(example);
		});
	}

	/**
	 * A budget whose every price is 0 can never trip, as one with no price at all.
	 */
	@Test
	void aBudgetWhosePricesAreAllZeroStopsStartUp() {
		this.runner
			.withPropertyValues("llm.quota.providers.openai.budget.per-day=50.00",
					"llm.quota.providers.openai.models.gpt-4o.cost.input-per-million=0",
					"llm.quota.providers.openai.models.gpt-4o.cost.output-per-million=0")
			.run((context) -> {
				assertThat(context).hasFailed();
				FailureAnalysis analysis = LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains("llm.quota.providers.openai.budget.per-day")
					.contains("never trip");
			});
	}

	/**
	 * An entry's own headers sending another value of its match-header would charge its
	 * calls to another account than the one they are booked on.
	 */
	@Test
	void aHeaderSendingAnotherValueThanTheMatchHeaderStopsStartUp() {
		this.runner
			.withPropertyValues("llm.quota.providers.openai.match-header.name=OpenAI-Project",
					"llm.quota.providers.openai.match-header.value=proj_a",
					"llm.quota.providers.openai.headers.openai-project=proj_b")
			.run((context) -> {
				assertThat(context).hasFailed();
				FailureAnalysis analysis = LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains("llm.quota.providers.openai.headers.openai-project")
					.doesNotContain("proj_b");
				assertThat(analysis.getAction()).contains("match-header");
			});
	}

	/**
	 * A budget written with a decimal comma is answered with an amount as the example,
	 * not the 0.8 of a share (an 80-cent budget).
	 */
	@Test
	void aBudgetWithADecimalCommaIsAnsweredWithAnAmount() {
		this.runner.withPropertyValues("llm.quota.providers.openai.budget.per-day=50,00").run((context) -> {
			FailureAnalysis analysis = LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure());
			assertThat(analysis.getDescription()).contains("llm.quota.providers.openai.budget.per-day");
			assertThat(analysis.getAction()).contains("50.00").doesNotContain("0.8");
		});
	}

	/**
	 * An api-version left empty (a placeholder's default of nothing) would send
	 * {@code ?api-version=} on every routed Azure call, which Azure refuses.
	 */
	@Test
	void anEmptyApiVersionOfARouteTargetStopsStartUp() {
		this.runner
			.withPropertyValues("llm.quota.providers.azure.base-url=https://east.openai.azure.com",
					"llm.quota.providers.azure.models.gpt-4o.requests-per-minute=100",
					"llm.quota.routes.gpt4o.targets[0].provider=azure",
					"llm.quota.routes.gpt4o.targets[0].model=gpt-4o", "llm.quota.routes.gpt4o.targets[0].api-version=")
			.run((context) -> {
				assertThat(context).hasFailed();
				FailureAnalysis analysis = LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains("llm.quota.routes.gpt4o.targets[0].api-version");
				assertThat(analysis.getAction()).contains("2024-10-21");
			});
	}

	/**
	 * A burst window past a minute makes a bucket hold more than a minute's limit: a 500
	 * a minute pool would let 2,500 through at once, every one past the first minute's
	 * refused by the provider.
	 */
	@Test
	void aBurstWindowLongerThanAMinuteStopsStartUp() {
		this.runner
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com",
					"llm.quota.providers.openai.burst-window=5m",
					"llm.quota.providers.openai.models.gpt-4o.requests-per-minute=500")
			.run((context) -> assertThat(
					LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure()).getDescription())
				.contains("llm.quota.providers.openai.burst-window"));
	}

	/** A price that is no finite number would make every call's cost infinite. */
	@Test
	void anInfinitePriceStopsStartUp() {
		this.runner
			.withPropertyValues("llm.quota.providers.openai.models.gpt-4o.cost.input-per-million=2.5",
					"llm.quota.providers.openai.models.gpt-4o.cost.output-per-million=Infinity")
			.run((context) -> assertThat(
					LlmQuotaAutoConfigurationTests.analyze(context.getStartupFailure()).getDescription())
				.contains("llm.quota.providers.openai.models.gpt-4o.cost.output-per-million"));
	}

}
