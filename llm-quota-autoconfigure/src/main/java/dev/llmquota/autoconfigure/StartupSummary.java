package dev.llmquota.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;

import dev.llmquota.core.Dimension;
import dev.llmquota.core.Limits;
import dev.llmquota.core.Mode;
import dev.llmquota.core.PoolSpec;
import dev.llmquota.core.ProviderSpec;
import dev.llmquota.core.QuotaEngine;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;

/**
 * Logs one line per provider entry once the application's beans exist: its dialect (and
 * whether it was inferred), region, models and limits, which HTTP clients are governed,
 * and where the books live. It is how a user sees at start-up that llm-quota works.
 */
final class StartupSummary implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog("dev.llmquota");

	/** Governing beans, each with the client it governs, in the order they are listed. */
	private static final List<Map.Entry<String, String>> CLIENTS = List.of(
			Map.entry("llmQuotaWebClientCustomizer", "WebClient"),
			Map.entry("llmQuotaRestClientCustomizer", "RestClient"),
			Map.entry("llmQuotaRestTemplateCustomizer", "RestTemplate"),
			Map.entry("llmQuotaOkHttpInterceptor", "OkHttp"),
			Map.entry("llmQuotaOpenAiHttpClientBuilderCustomizer", "Spring AI OpenAI"),
			Map.entry("llmQuotaAnthropicHttpClientBuilderCustomizer", "Spring AI Anthropic"),
			Map.entry("llmQuotaLangChain4jHttpClientBuilder",
					"LangChain4j (models given llmQuotaLangChain4jHttpClientBuilder)"),
			Map.entry("llmQuotaAnthropicInterceptor", "Anthropic SDK (clients given llmQuotaAnthropicInterceptor)"),
			Map.entry("llmQuotaAwsHttpClients", "AWS SDK (clients built on llmQuotaAwsHttpClients)"));

	private final QuotaEngine engine;

	private final LlmQuotaProperties properties;

	private final ListableBeanFactory beans;

	StartupSummary(QuotaEngine engine, LlmQuotaProperties properties, ListableBeanFactory beans) {
		this.engine = engine;
		this.properties = properties;
		this.beans = beans;
	}

	@Override
	public void afterSingletonsInstantiated() {
		if (!logger.isInfoEnabled()) {
			return;
		}
		lines().forEach(logger::info);
	}

	/**
	 * Returns the summary, one line per provider entry.
	 * @return the lines
	 */
	List<String> lines() {
		String clients = governedClients();
		String store = this.engine.store().status().backend();
		List<String> lines = new ArrayList<>();
		// in the order the configuration lists the entries
		for (Map.Entry<String, LlmQuotaProperties.Provider> entry : this.properties.getProviders().entrySet()) {
			ProviderSpec provider = this.engine.config().providers().get(entry.getKey());
			if (provider == null) {
				continue;
			}
			String how = (entry.getValue().getDialect() != null) ? ""
					: (DialectInference.of(provider.baseUrl()).dialect() != null) ? " (inferred from base-url)"
							: " (the base-url does not tell: set dialect)";
			StringBuilder line = new StringBuilder("llm-quota: provider '").append(provider.id())
				.append("' at ")
				.append(provider.baseUrl())
				.append(": dialect ")
				.append(provider.dialect())
				.append(how)
				.append(", region ")
				.append(provider.region());
			StringJoiner models = new StringJoiner(", ");
			provider.models().values().forEach((model) -> models.add(model(model)));
			provider.template()
				.ifPresent((template) -> models.add("default (any other model) " + limits(template.limits())));
			line.append(", models ").append((models.length() > 0) ? models : "none listed (unlimited until learned)");
			if (!provider.account().isEmpty()) {
				line.append(", account ").append(limits(provider.account()));
			}
			if (provider.models().values().stream().anyMatch((model) -> model.mode() != Mode.ENFORCE)) {
				line.append(", modes ").append(modes(provider));
			}
			line.append("; governs ").append(clients).append("; store ").append(store);
			lines.add(line.toString());
		}
		return lines;
	}

	private static String model(PoolSpec model) {
		return model.model() + " " + limits(model.limits());
	}

	private static String modes(ProviderSpec provider) {
		StringJoiner modes = new StringJoiner(", ", "[", "]");
		provider.models()
			.values()
			.forEach((model) -> modes.add(model.model() + "=" + model.mode().name().toLowerCase(Locale.ROOT)));
		return modes.toString();
	}

	private static String limits(Limits limits) {
		if (limits.isEmpty()) {
			return "[no limits]";
		}
		StringJoiner joined = new StringJoiner(", ", "[", "]");
		limits.asMap().forEach((dimension, limit) -> joined.add(dimension.id() + "=" + value(dimension, limit)));
		return joined.toString();
	}

	private static String value(Dimension dimension, long limit) {
		return dimension.countsMoney() ? String.format(Locale.ROOT, "%.2f", limit / 1e6) : Long.toString(limit);
	}

	private String governedClients() {
		StringJoiner clients = new StringJoiner(", ");
		for (Map.Entry<String, String> client : CLIENTS) {
			if (this.beans.containsBean(client.getKey())) {
				clients.add(client.getValue());
			}
		}
		return (clients.length() > 0) ? clients.toString() : "no client (no HTTP client library is on the class path)";
	}

}
