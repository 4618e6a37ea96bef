package dev.llmquota.autoconfigure;

import java.time.Duration;
import java.util.regex.Pattern;

import org.springframework.boot.context.properties.bind.AbstractBindHandler;
import org.springframework.boot.context.properties.bind.BindContext;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.PlaceholdersResolver;
import org.springframework.boot.context.properties.bind.PropertySourcesPlaceholdersResolver;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.core.env.Environment;

/**
 * Stops binding at a duration under {@code llm.quota} written as a bare number, which
 * Spring Boot reads as milliseconds: {@code lease-timeout: 600}, meant as seconds, would
 * give every call's slots back after 0.6 s. Zero, the same in every unit, passes.
 */
final class DurationsWithUnits extends AbstractBindHandler {

	private static final Pattern BARE = Pattern.compile("\\s*[-+]?\\d+\\s*");

	/** Resolves the placeholders of a value as the binder does: a default may be bare. */
	private final PlaceholdersResolver placeholders;

	DurationsWithUnits(BindHandler parent, Environment environment) {
		super(parent);
		this.placeholders = new PropertySourcesPlaceholdersResolver(environment);
	}

	@Override
	public Object onSuccess(ConfigurationPropertyName name, Bindable<?> target, BindContext context, Object result) {
		ConfigurationProperty property = context.getConfigurationProperty();
		Object value = (property != null) ? this.placeholders.resolvePlaceholders(property.getValue()) : null;
		if (result instanceof Duration duration && !duration.isZero() && value != null
				&& BARE.matcher(String.valueOf(value)).matches()) {
			String number = String.valueOf(value).trim();
			throw new InvalidQuotaPropertyException(name.toString(), number,
					"a number without its unit is read as milliseconds (" + number + "ms)", "write the unit: " + number
							+ "s, " + number + "ms or " + number + "m (or ISO-8601, PT" + number + "S).");
		}
		return super.onSuccess(name, target, context, result);
	}

}
