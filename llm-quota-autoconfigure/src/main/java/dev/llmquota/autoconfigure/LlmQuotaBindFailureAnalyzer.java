package dev.llmquota.autoconfigure;

import java.time.Duration;
import java.time.ZoneId;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.convert.ConversionFailedException;
import org.springframework.core.convert.ConverterNotFoundException;

/**
 * Explains a start-up stopped while binding {@code llm.quota.*}: a key that does not
 * exist (with the key that was probably meant), or a value of the wrong form (a decimal
 * duration, an unknown enum value or zone), naming the property and the accepted forms.
 * It runs before Spring Boot's own analyzers, which would not say what was meant.
 */
class LlmQuotaBindFailureAnalyzer extends AbstractFailureAnalyzer<BindException> implements Ordered {

	private static final ConfigurationPropertyName ROOT = ConfigurationPropertyName.of("llm.quota");

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, BindException cause) {
		if (!ROOT.equals(cause.getName()) && !ROOT.isAncestorOf(cause.getName())) {
			return null;
		}
		if (cause.getCause() instanceof UnboundConfigurationPropertiesException unbound) {
			return unknown(unbound, cause);
		}
		ConfigurationProperty property = cause.getProperty();
		if (cause.getCause() instanceof ConverterNotFoundException) {
			// a value where an object or a map goes (a model listed with no limits, a
			// budget written as a number)
			return analysis(new InvalidQuotaPropertyException(cause.getName().toString(),
					(property != null) ? property.getValue() : "", "it takes properties below it, not a value",
					"write its properties below it, as the configuration reference in the README shows; in YAML an"
							+ " entry with none is written {}, for example gpt-4o: {}."),
					cause);
		}
		if (property == null || !(cause.getCause() instanceof ConversionFailedException)) {
			return null;
		}
		Class<?> target = cause.getTarget().getType().resolve(Object.class);
		String name = property.getName().toString();
		return analysis(new InvalidQuotaPropertyException(name, property.getValue(), reason(target), fix(target, name)),
				cause);
	}

	private static FailureAnalysis unknown(UnboundConfigurationPropertiesException unbound, BindException cause) {
		List<ConfigurationProperty> properties = unbound.getUnboundProperties()
			.stream()
			.sorted(Comparator.comparing((property) -> property.getName().toString()))
			.toList();
		ConfigurationProperty first = properties.get(0);
		PropertyKeys.Diagnosis diagnosis = PropertyKeys.diagnose(first.getName());
		String others = (properties.size() > 1) ? " (" + (properties.size() - 1) + " more unknown: "
				+ properties.stream()
					.skip(1)
					.map((property) -> property.getName().toString())
					.collect(Collectors.joining(", "))
				+ ")" : "";
		String description = "llm-quota cannot start: unknown property " + first.getName() + " (" + diagnosis.reason()
				+ ")" + ((diagnosis.suggestion() != null) ? "; did you mean " + diagnosis.suggestion() + "?" : "")
				+ others + ". A key llm-quota does not know would otherwise be ignored in silence, leaving"
				+ " a limit unset.";
		String action = (diagnosis.suggestion() != null)
				? "Update " + first.getName() + " in your configuration: rename it to " + diagnosis.suggestion() + "."
				: "Update " + first.getName() + " in your configuration: remove it" + (diagnosis.valid().isEmpty() ? "."
						: ", or use one of the keys valid there: " + PropertyKeys.list(diagnosis.valid()) + ".");
		return new FailureAnalysis(description, action, cause);
	}

	private static FailureAnalysis analysis(InvalidQuotaPropertyException invalid, Throwable cause) {
		return new FailureAnalysis("llm-quota cannot start: " + invalid.getMessage() + ".",
				"Update " + invalid.getProperty() + " in your configuration: " + invalid.getFix(), cause);
	}

	private static String reason(Class<?> target) {
		if (target == Duration.class) {
			return "not a duration Spring Boot reads (a unit takes whole numbers: 1.4s is not read)";
		}
		if (target == ZoneId.class) {
			return "not a time zone";
		}
		if (target.isEnum()) {
			return "not one of " + values(target);
		}
		if (target == Boolean.class || target == boolean.class) {
			return "not true or false";
		}
		if (wholeNumber(target)) {
			return "not a whole number";
		}
		return "not a " + target.getSimpleName().toLowerCase(Locale.ROOT);
	}

	private static String fix(Class<?> target, String name) {
		if (target == Duration.class) {
			return "write whole units, such as 1400ms, 30s or 2m, or ISO-8601, such as PT1.4S.";
		}
		if (target == ZoneId.class) {
			return "use a zone id such as UTC or America/Los_Angeles (Gemini's per-day quotas reset at midnight"
					+ " Pacific).";
		}
		if (target.isEnum()) {
			return "use one of " + values(target) + ".";
		}
		if (target == Boolean.class || target == boolean.class) {
			return "set true or false.";
		}
		if (wholeNumber(target)) {
			return "set a whole number, for example 500.";
		}
		if (money(name)) {
			// a budget of 0.8 is 80 cents
			return "set an amount in the account's currency with a decimal point, no currency sign and no thousands"
					+ " separator, for example 50.00.";
		}
		return "set a " + target.getSimpleName().toLowerCase(Locale.ROOT) + ", for example 0.8.";
	}

	/** A budget or a price: an amount of money. */
	private static boolean money(String name) {
		return name.contains(".budget.per-") || (name.contains(".cost.") && !name.endsWith(".cost."));
	}

	private static boolean wholeNumber(Class<?> target) {
		return target == int.class || target == Integer.class || target == long.class || target == Long.class;
	}

	private static String values(Class<?> target) {
		return Arrays.stream(target.getEnumConstants())
			.map((constant) -> ((Enum<?>) constant).name().toLowerCase(Locale.ROOT).replace('_', '-'))
			.collect(Collectors.joining(", "));
	}

}
