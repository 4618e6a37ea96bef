package dev.llmquota;

import java.util.ArrayList;
import java.util.List;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaMethod;
import com.tngtech.archunit.core.domain.JavaMethodCall;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.Location;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The package rules that keep the engine easy to change.
 */
class ArchitectureTests {

	// this module's own classes, read from where they were compiled: looking the package
	// up on the test class path searched every dependency's jar, half a minute a run
	private static final JavaClasses CLASSES = new ClassFileImporter()
		.importLocations(List.of(Location.of(LlmQuota.class.getProtectionDomain().getCodeSource().getLocation())));

	@Test
	void coreImportsNeitherSpringNorAnyHttpStack() {
		noClasses().that()
			.resideInAPackage("dev.llmquota.core..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("org.springframework..", "java.net.http..", "io.netty..", "reactor.netty..",
					"okhttp3..", "tools.jackson..", "com.fasterxml..")
			.check(CLASSES);
	}

	@Test
	void theKernelImportsOnlyJavaAndItself() {
		classes().that()
			.resideInAPackage("dev.llmquota.core.kernel..")
			.should()
			.onlyDependOnClassesThat()
			.resideInAnyPackage("java..", "dev.llmquota.core.kernel..")
			.check(CLASSES);
	}

	@Test
	void runtimePackagesNeverImportAutoConfiguration() {
		noClasses().that()
			.resideOutsideOfPackage("dev.llmquota.autoconfigure..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage("dev.llmquota.autoconfigure..")
			.check(CLASSES);
	}

	@Test
	void coreDoesNotDependOnStoresOrAdapters() {
		noClasses().that()
			.resideInAPackage("dev.llmquota.core..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("dev.llmquota.store..", "dev.llmquota.client..", "dev.llmquota.provider..",
					"dev.llmquota.actuate..", "dev.llmquota.metrics..")
			.check(CLASSES);
	}

	@Test
	void noSynchronizedMethodWaitsForAdmission() {
		// a blocking wait inside a monitor would pin a virtual thread's carrier
		List<String> violations = new ArrayList<>();
		for (JavaClass type : CLASSES) {
			for (JavaMethod method : type.getMethods()) {
				if (!method.getModifiers().contains(JavaModifier.SYNCHRONIZED)) {
					continue;
				}
				for (JavaMethodCall call : method.getMethodCallsFromSelf()) {
					if (call.getTargetOwner().isEquivalentTo(Mono.class) && call.getName().startsWith("block")) {
						violations.add(method.getFullName());
					}
				}
			}
		}
		assertThat(violations).isEmpty();
	}

	@Test
	void mainCodeHoldsNoMonitorAroundAWait() {
		noClasses().that()
			.resideInAPackage("dev.llmquota..")
			.should()
			.callMethod(Object.class, "wait")
			.orShould()
			.callMethod(Thread.class, "sleep", long.class)
			.check(CLASSES);
	}

}
