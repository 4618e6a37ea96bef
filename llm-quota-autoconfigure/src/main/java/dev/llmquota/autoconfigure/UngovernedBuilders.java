package dev.llmquota.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;

/**
 * Warns, once at start-up, of each client builder bean an application defines itself
 * without llm-quota on it: Spring Boot then backs its own builder off, so the customizers
 * that govern calls never run, and every call built from that builder would pass
 * ungoverned in silence.
 *
 * @param <B> the builder type
 */
final class UngovernedBuilders<B> implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog("dev.llmquota");

	private final ListableBeanFactory beans;

	private final Class<B> type;

	private final Predicate<B> governed;

	private final String fix;

	/**
	 * Creates the check.
	 * @param beans the application's beans
	 * @param type the builder type
	 * @param governed whether a builder carries llm-quota
	 * @param fix the one line that governs such a builder
	 */
	UngovernedBuilders(ListableBeanFactory beans, Class<B> type, Predicate<B> governed, String fix) {
		this.beans = beans;
		this.type = type;
		this.governed = governed;
		this.fix = fix;
	}

	@Override
	public void afterSingletonsInstantiated() {
		warnings().forEach(logger::warn);
	}

	/**
	 * Returns the warnings, one per ungoverned builder bean.
	 * @return the warnings
	 */
	List<String> warnings() {
		List<String> warnings = new ArrayList<>();
		for (String name : this.beans.getBeanNamesForType(this.type, true, false)) {
			B builder;
			try {
				builder = this.beans.getBean(name, this.type);
			}
			catch (RuntimeException ex) {
				// a bean that cannot be made here fails the application elsewhere
				continue;
			}
			if (!this.governed.test(builder)) {
				warnings.add("llm-quota: the " + this.type.getCanonicalName() + " bean '" + name
						+ "' is the application's own, so Spring Boot's customizers never run on it and calls built"
						+ " from it are not governed. Govern it with one line where it is built: " + this.fix);
			}
		}
		return warnings;
	}

}
