package dev.llmquota.test.junit;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import dev.llmquota.test.simulator.ProviderSimulator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One simulator per declaring class, shared with its {@code @Nested} classes and reset
 * before each of their tests.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ProviderSimulatorExtensionTests {

	@RegisterExtension
	static final ProviderSimulatorExtension extension = new ProviderSimulatorExtension(
			ProviderSimulator.builder().model("gpt-4o", (limits) -> limits.requestsPerMinute(100)));

	private static final HttpClient CLIENT = HttpClient.newHttpClient();

	private static ProviderSimulator outer;

	@AfterAll
	static void outerSimulatorOutlivesItsNestedClasses() throws Exception {
		assertThat(extension.simulator()).isSameAs(outer);
		assertThat(call(outer)).isEqualTo(200);
	}

	@Test
	@Order(1)
	void injectsTheRunningSimulator(ProviderSimulator simulator) throws Exception {
		outer = simulator;
		assertThat(extension.simulator()).isSameAs(simulator);
		assertThat(call(simulator)).isEqualTo(200);
	}

	static int call(ProviderSimulator simulator) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create(simulator.baseUrl() + "/v1/chat/completions"))
			.POST(HttpRequest.BodyPublishers.ofString(
					"{\"model\":\"gpt-4o\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"))
			.build();
		return CLIENT.send(request, HttpResponse.BodyHandlers.ofString()).statusCode();
	}

	@Nested
	class WhenNested {

		@Test
		void sharesTheDeclaringClassesSimulatorReset(ProviderSimulator simulator) throws Exception {
			assertThat(simulator).isSameAs(outer);
			assertThat(simulator.requestLog().size()).isZero();
			assertThat(call(simulator)).isEqualTo(200);
		}

		@Nested
		class AndNestedAgain {

			@Test
			void stillSharesIt(ProviderSimulator simulator) {
				assertThat(simulator).isSameAs(outer);
				assertThat(simulator.requestLog().size()).isZero();
			}

		}

	}

}
