package dev.llmquota.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.Locale;
import java.util.Set;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches unless {@code llm.quota.enabled} is a value Spring reads as false
 * ({@code false}, {@code off}, {@code no}, {@code 0}). Boot's boolean condition matches
 * {@code true} alone, so a mistyped value ({@code ture}) switched llm-quota, and every
 * check of its configuration, off in silence, and {@code yes}, which the properties bind
 * as true, off too; here any other value turns it on, and one that is not a boolean then
 * fails to bind, naming the property.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ ElementType.TYPE, ElementType.METHOD })
@Documented
@Conditional(ConditionalOnLlmQuotaEnabled.OnLlmQuotaEnabled.class)
@interface ConditionalOnLlmQuotaEnabled {

	/** The condition. */
	final class OnLlmQuotaEnabled extends SpringBootCondition {

		/** What Spring's conversion reads as false. */
		private static final Set<String> FALSE = Set.of("false", "off", "no", "0");

		@Override
		public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
			String value = Binder.get(context.getEnvironment()).bind("llm.quota.enabled", String.class).orElse(null);
			if (value != null && FALSE.contains(value.trim().toLowerCase(Locale.ROOT))) {
				return ConditionOutcome.noMatch("llm.quota.enabled is " + value);
			}
			return ConditionOutcome
				.match((value != null) ? "llm.quota.enabled is " + value : "llm.quota.enabled unset");
		}

	}

}
