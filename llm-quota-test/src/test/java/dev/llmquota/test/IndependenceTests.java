package dev.llmquota.test;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The simulator is an independent model of the provider: it never uses the engine, AWS's
 * libraries, nor Jackson 2.
 */
class IndependenceTests {

	private final JavaClasses classes = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("dev.llmquota.test");

	@Test
	void neverDependsOnTheEngine() {
		noClasses().should()
			.dependOnClassesThat()
			.resideInAnyPackage("dev.llmquota", "dev.llmquota.core..", "dev.llmquota.provider..",
					"dev.llmquota.tokens..", "dev.llmquota.store..", "dev.llmquota.client..",
					"dev.llmquota.autoconfigure..", "dev.llmquota.actuate..", "dev.llmquota.metrics..")
			.check(this.classes);
	}

	@Test
	void writesTheAwsEventStreamFramingItself() {
		noClasses().should().dependOnClassesThat().resideInAPackage("software.amazon..").check(this.classes);
	}

	@Test
	void usesJackson3Only() {
		noClasses().should()
			.dependOnClassesThat()
			.resideInAPackage("com.fasterxml.jackson.databind..")
			.check(this.classes);
	}

}
