package dev.llmquota.autoconfigure;

import java.time.Duration;
import java.util.regex.Pattern;

import org.springframework.boot.context.properties.bind.AbstractBindHandler;
import org.springframework.boot.context.properties.bind.BindContext;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;

/**
 * Stops binding at a duration under {@code llm.quota} written as a bare number, which
 * Spring Boot reads as milliseconds: {@code lease-timeout: 600}, meant as seconds, would
 * give every call's slots back after 0.6 s. Zero, the same in every unit, passes.
 */
final class DurationsWithUnits extends AbstractBindHandler {

	private static final Pattern BARE = Pattern.compile("\\s*[-+]?\\d+\\s*");

	DurationsWithUnits(BindHandler parent) {
		super(parent);
	}

	@Override
	public Object onSuccess(ConfigurationPropertyName name, Bindable<?> target, BindContext context, Object result) {
		ConfigurationProperty property = context.getConfigurationProperty();
		if (result instanceof Duration duration && !duration.isZero() && property != null
				&& BARE.matcher(String.valueOf(property.getValue())).matches()) {
			String number = String.valueOf(property.getValue()).trim();
			throw new InvalidQuotaPropertyException(name.toString(), number,
					"a number without its unit is read as milliseconds (" + number + "ms)", "write the unit: " + number
							+ "s, " + number + "ms or " + number + "m (or ISO-8601, PT" + number + "S).");
		}
		return super.onSuccess(name, target, context, result);
	}

}
