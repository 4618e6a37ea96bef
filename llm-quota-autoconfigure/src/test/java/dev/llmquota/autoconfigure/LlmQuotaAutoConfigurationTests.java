package dev.llmquota.autoconfigure;

import java.time.Duration;

import dev.llmquota.core.Cost;
import dev.llmquota.core.Demand;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.Mode;
import dev.llmquota.core.Pool;
import dev.llmquota.core.PoolSnapshot;
import dev.llmquota.core.Priority;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.core.QuotaStore;
import dev.llmquota.core.Usage;
import dev.llmquota.store.LocalQuotaStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.type.AnnotatedTypeMetadata;

import static dev.llmquota.core.BucketSpec.Scope.ACCOUNT;
import static dev.llmquota.core.BucketSpec.Scope.POOL;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * Wiring of {@link LlmQuotaAutoConfiguration}.
 */
@ExtendWith(OutputCaptureExtension.class)
class LlmQuotaAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LlmQuotaAutoConfiguration.class));

	@Test
	void registersAnEngineOnTheLocalStoreByDefault() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(QuotaEngine.class);
			assertThat(context).hasSingleBean(LocalQuotaStore.class);
			assertThat(context.getBean(QuotaEngine.class).config().settings().headroom()).isEqualTo(0.8);
		});
	}

	@ParameterizedTest
	@CsvSource({ "openai, true", "azure-openai, false", "anthropic, false", "bedrock, false", "gemini, false",
			"ollama, false" })
	void aRefusedRequestStaysChargedOnlyWhereTheProviderSaysItCounts(String dialect, boolean charged) {
		this.runner
			.withPropertyValues("llm.quota.providers.p.dialect=" + dialect,
					"llm.quota.providers.p.base-url=http://localhost:1",
					"llm.quota.providers.p.models.m.requests-per-minute=10")
			.run((context) -> assertThat(
					context.getBean(QuotaEngine.class).config().providers().get("p").chargeRefusedRequests())
				.isEqualTo(charged));
	}

	@Test
	void registersNothingWhenDisabled() {
		this.runner.withPropertyValues("llm.quota.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(QuotaEngine.class)
				.doesNotHaveBean(QuotaStore.class)
				.doesNotHaveBean(LlmQuotaProperties.class));
	}

	@Test
	void backsOffWhenTheUserProvidesAStore() {
		LocalQuotaStore own = new LocalQuotaStore();
		this.runner.withBean("myStore", QuotaStore.class, () -> own).run((context) -> {
			assertThat(context).hasSingleBean(QuotaStore.class);
			assertThat(context.getBean(QuotaEngine.class).store()).isSameAs(own);
		});
	}

	@Test
	void bindsProviderEntriesModelsAliasesAndTheTemplate() {
		this.runner.withPropertyValues("llm.quota.headroom=0.8", "llm.quota.max-wait=5s",
				"llm.quota.providers.openai.base-url=https://api.openai.com", "llm.quota.providers.openai.region=us",
				"llm.quota.providers.openai.account.tokens-per-minute=3000000",
				"llm.quota.providers.openai.models.gpt-4o.requests-per-minute=500",
				"llm.quota.providers.openai.models.gpt-4o.tokens-per-minute=30000",
				"llm.quota.providers.openai.models.gpt-4o.concurrent-requests=64",
				"llm.quota.providers.openai.models.gpt-4o.aliases=gpt-4o-2024-08-06",
				"llm.quota.providers.openai.models.mini.name=gpt-4.1-mini",
				"llm.quota.providers.openai.models.mini.priority=batch",
				"llm.quota.providers.openai.models.mini.requests-per-day=10000",
				"llm.quota.providers.openai.models.default.requests-per-minute=100",
				"llm.quota.providers.azure.base-url=https://eastus.openai.azure.com",
				"llm.quota.providers.azure.dialect=azure-openai")
			.run((context) -> {
				QuotaEngine engine = context.getBean(QuotaEngine.class);
				assertThat(engine.config().settings().maxWait()).isEqualTo(Duration.ofSeconds(5));
				Pool gpt4o = engine.pool("openai", "gpt-4o-2024-08-06");
				assertThat(gpt4o.model()).isEqualTo("gpt-4o");
				assertThat(gpt4o.region()).isEqualTo("us");
				PoolSnapshot snapshot = engine.snapshot(gpt4o);
				assertThat(snapshot.bucket(POOL, Dimension.REQUESTS_PER_MINUTE).bucket().enforced()).isEqualTo(400);
				assertThat(snapshot.bucket(POOL, Dimension.TOKENS_PER_MINUTE).bucket().capacity()).isEqualTo(800);
				assertThat(snapshot.bucket(ACCOUNT, Dimension.TOKENS_PER_MINUTE).bucket().enforced())
					.isEqualTo(2_400_000);
				assertThat(snapshot.gate(POOL, Dimension.CONCURRENT_REQUESTS, false).capacity()).isEqualTo(51);
				Pool mini = engine.pool("openai", "gpt-4.1-mini");
				assertThat(mini.spec().priority()).isEqualTo(Priority.BATCH);
				assertThat(engine.pool("openai", "o3").spec().limits().asMap())
					.containsEntry(Dimension.REQUESTS_PER_MINUTE, 100L);
				assertThat(engine.config().providers().get("azure").dialect()).isEqualTo("azure-openai");
			});
	}

	@Test
	void dialectDefaultsDecideHowOutputAndCachedInputAreCharged() {
		this.runner
			.withPropertyValues("llm.quota.providers.claude.base-url=https://api.anthropic.com",
					"llm.quota.providers.claude.dialect=anthropic",
					"llm.quota.providers.claude.models.sonnet.output-tokens-per-minute=8000",
					"llm.quota.providers.gpt.base-url=https://api.openai.com",
					"llm.quota.providers.gpt.models.gpt-4o.tokens-per-minute=30000",
					"llm.quota.providers.gpt.cached-input-counts=false")
			.run((context) -> {
				QuotaEngine engine = context.getBean(QuotaEngine.class);
				assertThat(engine.pool("claude", "sonnet").spec().accounting().reserveMaxTokens()).isFalse();
				assertThat(engine.pool("claude", "sonnet").spec().accounting().cachedInputCounts()).isFalse();
				assertThat(engine.pool("gpt", "gpt-4o").spec().accounting().reserveMaxTokens()).isTrue();
				assertThat(engine.pool("gpt", "gpt-4o").spec().accounting().cachedInputCounts()).isFalse();
			});
	}

	@Test
	void closesTheEngineWithTheContextSoWaitersFailAndSlotsAreReleased() {
		this.runner.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com").run((context) -> {
			QuotaEngine engine = context.getBean(QuotaEngine.class);
			context.close();
			assertThat(engine.isClosed()).isTrue();
		});
	}

	@Test
	void anApplicationWithABadPropertyStopsWithTheAnalysisPrinted(CapturedOutput output) {
		SpringApplication application = new SpringApplication(EmptyApplication.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		assertThatException().isThrownBy(() -> application.run("--llm.quota.headroom=1.5"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("llm-quota cannot start: Invalid value '1.5' for llm.quota.headroom")
			.contains("Update llm.quota.headroom in your configuration");
	}

	@Test
	void anUnknownDialectStopsStartUpListingTheDialects(CapturedOutput output) {
		SpringApplication application = new SpringApplication(EmptyApplication.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		assertThatException()
			.isThrownBy(() -> application.run("--llm.quota.providers.openai.base-url=https://api.openai.com",
					"--llm.quota.providers.openai.dialect=openia"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("llm.quota.providers.openai.dialect")
			.contains("openia")
			.contains("azure-openai");
	}

	@Test
	void aModelIdClaimedTwiceStopsStartUp() {
		this.runner.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com",
				"llm.quota.providers.openai.models.a.name=gpt-4o", "llm.quota.providers.openai.models.b.aliases=gpt-4o")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains("llm.quota.providers.openai.models.b.aliases");
			});
	}

	/**
	 * A call's model is matched in any case: two entries whose ids differ only in case
	 * would leave a call in a third spelling under neither's limits, in silence.
	 */
	@Test
	void modelIdsThatDifferOnlyInCaseStopStartUp() {
		this.runner.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com",
				"llm.quota.providers.openai.models.a.name=gpt-4o", "llm.quota.providers.openai.models.b.aliases=GPT-4o")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains("llm.quota.providers.openai.models.b.aliases")
					.contains("GPT-4o")
					.contains("models.a");
			});
		// one entry naming itself in two cases is one pool
		this.runner
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com",
					"llm.quota.providers.openai.models.gpt-4o.aliases=GPT-4o")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	/**
	 * Anthropic bills a prompt-cache write at 1.25 times input (on its API and on
	 * Bedrock): an entry's price for it defaults so, the others' to the input price, and
	 * cache-write-input-per-million sets it.
	 */
	@Test
	void aCacheWriteIsPricedAsTheProviderBillsIt() {
		this.runner
			.withPropertyValues("llm.quota.providers.claude.base-url=https://api.anthropic.com",
					"llm.quota.providers.claude.models.sonnet.cost.input-per-million=3",
					"llm.quota.providers.claude.models.sonnet.cost.output-per-million=15",
					"llm.quota.providers.claude.models.hour.cost.input-per-million=3",
					"llm.quota.providers.claude.models.hour.cost.output-per-million=15",
					"llm.quota.providers.claude.models.hour.cost.cache-write-input-per-million=6",
					"llm.quota.providers.openai.base-url=https://api.openai.com",
					"llm.quota.providers.openai.models.gpt-4o.cost.input-per-million=2.5",
					"llm.quota.providers.openai.models.gpt-4o.cost.output-per-million=10",
					"llm.quota.providers.bedrock.base-url=https://bedrock-runtime.us-east-1.amazonaws.com",
					"llm.quota.providers.bedrock.models.[anthropic.claude-sonnet-4].cost.input-per-million=3",
					"llm.quota.providers.bedrock.models.[anthropic.claude-sonnet-4].cost.output-per-million=15",
					"llm.quota.providers.bedrock.models.[amazon.nova-pro].cost.input-per-million=0.8",
					"llm.quota.providers.bedrock.models.[amazon.nova-pro].cost.output-per-million=3.2",
					"llm.quota.providers.bedrock.models.sonnet.aliases=anthropic.claude-sonnet-4-5",
					"llm.quota.providers.bedrock.models.sonnet.cost.input-per-million=3",
					"llm.quota.providers.bedrock.models.sonnet.cost.output-per-million=15")
			.run((context) -> {
				QuotaEngine engine = context.getBean(QuotaEngine.class);
				Cost sonnet = engine.pool("claude", "sonnet").spec().accounting().cost();
				assertThat(sonnet.cacheWriteInputPerMillion()).isEqualTo(3.75);
				assertThat(engine.pool("claude", "hour").spec().accounting().cost().cacheWriteInputPerMillion())
					.isEqualTo(6);
				assertThat(engine.pool("openai", "gpt-4o").spec().accounting().cost().cacheWriteInputPerMillion())
					.isEqualTo(2.5);
				// on Bedrock, Anthropic's models (and the template that may serve them)
				// only
				assertThat(engine.pool("bedrock", "anthropic.claude-sonnet-4")
					.spec()
					.accounting()
					.cost()
					.cacheWriteInputPerMillion()).isEqualTo(3.75);
				assertThat(engine.pool("bedrock", "amazon.nova-pro")
					.spec()
					.accounting()
					.cost()
					.cacheWriteInputPerMillion()).isEqualTo(0.8);
				assertThat(engine.pool("bedrock", "sonnet").spec().accounting().cost().cacheWriteInputPerMillion())
					.as("a friendly key whose alias names Claude")
					.isEqualTo(3.75);
				// 100 tokens after the cache breakpoint and 10,000 written to the cache:
				// 100 x 3 + 10,000 x 3.75 millionths
				Usage written = new Usage(10_100, 0, 0, 10_000);
				assertThat(sonnet.micros(written)).isEqualTo(37_800);
				assertThat(sonnet.microsAtAdmission(new Demand(10_100, 0))).as("a reservation that can pay for it")
					.isGreaterThanOrEqualTo(37_800);
			});
	}

	@Test
	void bindsBudgetsInMillionthsAndPricesPerMillionTokens() {
		this.runner.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com",
				"llm.quota.providers.openai.budget.per-day=50", "llm.quota.providers.openai.budget.per-month=1200.5",
				"llm.quota.providers.openai.budget.warn-at=0.9",
				"llm.quota.providers.openai.models.gpt-4o.cost.input=2.5",
				"llm.quota.providers.openai.models.gpt-4o.cost.output=10",
				"llm.quota.providers.openai.models.gpt-4o.mode=shadow", "llm.quota.providers.openai.mode=off")
			.run((context) -> {
				QuotaEngine engine = context.getBean(QuotaEngine.class);
				Pool pool = engine.pool("openai", "gpt-4o");
				assertThat(pool.account().limits().asMap()).containsEntry(Dimension.BUDGET_PER_DAY, 50_000_000L)
					.containsEntry(Dimension.BUDGET_PER_MONTH, 1_200_500_000L);
				assertThat(pool.account().provider().budgetWarnAt()).isEqualTo(0.9);
				assertThat(pool.spec().accounting().cost()).isEqualTo(new Cost(2.5, 10, 2.5));
				assertThat(pool.spec().mode()).isEqualTo(Mode.SHADOW);
				assertThat(engine.pool("openai", "other").spec().mode()).isEqualTo(Mode.OFF);
			});
	}

	@Test
	void aNegativeBudgetStopsStartUpNamingTheProperty() {
		this.runner
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com",
					"llm.quota.providers.openai.budget.per-day=-5")
			.run((context) -> assertThat(analyze(context.getStartupFailure()).getDescription())
				.contains("llm.quota.providers.openai.budget.per-day"));
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class EmptyApplication {

	}

	static FailureAnalysis analyze(Throwable failure) {
		// binding is explained first, as the application's analyzers run by their order
		FailureAnalysis analysis = new LlmQuotaBindFailureAnalyzer().analyze(failure);
		if (analysis == null) {
			analysis = new LlmQuotaConfigurationFailureAnalyzer().analyze(failure);
		}
		assertThat(analysis).as("analysis of %s", failure).isNotNull();
		return analysis;
	}

	/**
	 * Another library's condition that creates beans while the configuration is still
	 * being read (Spring AI's Google GenAI one does) makes llm-quota's beans before
	 * Boot's property binder is in place: the properties are bound all the same, or
	 * llm-quota would govern nothing in silence.
	 */
	@Test
	void propertiesAreBoundEvenWhenAConditionCreatesLlmQuotasBeansBeforeBootsBinder() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(LlmQuotaAutoConfiguration.class, EagerCondition.class))
			.withUserConfiguration(EarlyUser.class)
			.withPropertyValues("llm.quota.providers.openai.base-url=https://api.openai.com")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(QuotaEngine.class).config().providers()).containsKey("openai");
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class EarlyUser {

		@Bean
		StringBuilder early(QuotaEngine engine) {
			return new StringBuilder("made early, on an engine of ").append(engine.config().providers().size())
				.append(" provider entries");
		}

	}

	@AutoConfiguration(after = LlmQuotaAutoConfiguration.class)
	static class EagerCondition {

		@Bean
		@Conditional(CreatesBeans.class)
		String eager() {
			return "eager";
		}

	}

	static class CreatesBeans implements Condition {

		@Override
		public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
			context.getBeanFactory().getBean("early");
			return true;
		}

	}

}
