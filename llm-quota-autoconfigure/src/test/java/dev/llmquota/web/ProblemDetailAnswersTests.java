package dev.llmquota.web;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

import dev.llmquota.BudgetExhaustedException;
import dev.llmquota.LlmQuotaException;
import dev.llmquota.QuotaEngineClosedException;
import dev.llmquota.QuotaExhaustedException;
import dev.llmquota.QuotaStoreUnavailableException;
import dev.llmquota.QuotaWaitTimeoutException;
import dev.llmquota.RateLimitedException;
import dev.llmquota.autoconfigure.LlmQuotaAutoConfiguration;
import dev.llmquota.autoconfigure.LlmQuotaProblemDetailsAutoConfiguration;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * An llm-quota exception that escapes a controller answers 429 or 503 with a problem
 * detail, in a WebFlux and in an MVC application, and the application's own handlers win.
 */
class ProblemDetailAnswersTests {

	private static final String[] PROPERTIES = { "llm.quota.providers.openai.base-url=https://api.openai.com" };

	private final ReactiveWebApplicationContextRunner reactive = new ReactiveWebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LlmQuotaAutoConfiguration.class,
				LlmQuotaProblemDetailsAutoConfiguration.class, WebFluxAutoConfiguration.class))
		.withUserConfiguration(Failing.class)
		.withPropertyValues(PROPERTIES);

	private final WebApplicationContextRunner servlet = new WebApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(LlmQuotaAutoConfiguration.class, LlmQuotaProblemDetailsAutoConfiguration.class,
						WebMvcAutoConfiguration.class, DispatcherServletAutoConfiguration.class))
		.withUserConfiguration(Failing.class)
		.withPropertyValues(PROPERTIES);

	@Test
	void aWebFluxApplicationAnswersEachExceptionWithItsStatusRetryAfterAndWhere() {
		this.reactive.run((context) -> {
			WebTestClient client = WebTestClient.bindToApplicationContext(context).build();
			client.get()
				.uri("/fail/timeout")
				.exchange()
				.expectStatus()
				.isEqualTo(429)
				.expectHeader()
				.valueEquals("Retry-After", "3")
				.expectHeader()
				.contentType("application/problem+json")
				.expectBody()
				.jsonPath("$.status")
				.isEqualTo(429)
				.jsonPath("$.provider")
				.isEqualTo("openai")
				.jsonPath("$.region")
				.isEqualTo("us")
				.jsonPath("$.model")
				.isEqualTo("gpt-4o")
				.jsonPath("$.dimension")
				.isEqualTo("tokens-per-minute")
				.jsonPath("$.detail")
				.value((detail) -> assertThat(detail.toString()).contains("30s").doesNotContain("PT"));
			client.get()
				.uri("/fail/rate-limited")
				.exchange()
				.expectStatus()
				.isEqualTo(429)
				.expectHeader()
				.valueEquals("Retry-After", "12");
			client.get()
				.uri("/fail/exhausted")
				.exchange()
				.expectStatus()
				.isEqualTo(503)
				.expectHeader()
				.exists("Retry-After");
			client.get()
				.uri("/fail/exhausted-no-reset")
				.exchange()
				.expectStatus()
				.isEqualTo(503)
				.expectHeader()
				.doesNotExist("Retry-After")
				.expectBody()
				.jsonPath("$.detail")
				.value((detail) -> assertThat(detail.toString()).doesNotContain("org-secret"));
			client.get()
				.uri("/fail/budget")
				.exchange()
				.expectStatus()
				.isEqualTo(503)
				.expectHeader()
				.exists("Retry-After");
			client.get()
				.uri("/fail/store")
				.exchange()
				.expectStatus()
				.isEqualTo(503)
				.expectHeader()
				.doesNotExist("Retry-After");
			client.get()
				.uri("/fail/closed")
				.exchange()
				.expectStatus()
				.isEqualTo(503)
				.expectHeader()
				.doesNotExist("Retry-After");
		});
	}

	@Test
	void anMvcApplicationAnswersTheSame() {
		this.servlet.run((context) -> {
			MockMvc mvc = MockMvcBuilders.webAppContextSetup(context).build();
			mvc.perform(get("/fail/timeout"))
				.andExpect(status().isTooManyRequests())
				.andExpect(header().string("Retry-After", "3"))
				.andExpect(jsonPath("$.provider").value("openai"))
				.andExpect(jsonPath("$.model").value("gpt-4o"))
				.andExpect(jsonPath("$.dimension").value("tokens-per-minute"));
			mvc.perform(get("/fail/exhausted")).andExpect(status().isServiceUnavailable());
			mvc.perform(get("/fail/store"))
				.andExpect(status().isServiceUnavailable())
				.andExpect(header().doesNotExist("Retry-After"));
		});
	}

	@Test
	void theApplicationsOwnHandlersWin() {
		this.servlet.withUserConfiguration(OwnAdvice.class).run((context) -> {
			MockMvc mvc = MockMvcBuilders.webAppContextSetup(context).build();
			mvc.perform(get("/fail/timeout")).andExpect(status().isConflict());
			mvc.perform(get("/local/timeout")).andExpect(status().isPaymentRequired());
		});
		this.reactive.withUserConfiguration(OwnAdvice.class).run((context) -> {
			WebTestClient client = WebTestClient.bindToApplicationContext(context).build();
			client.get().uri("/fail/timeout").exchange().expectStatus().isEqualTo(HttpStatus.CONFLICT);
			client.get().uri("/local/timeout").exchange().expectStatus().isEqualTo(HttpStatus.PAYMENT_REQUIRED);
		});
	}

	@Test
	void theAnswersCanBeSwitchedOff() {
		this.reactive.withPropertyValues("llm.quota.problem-details.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(LlmQuotaExceptionHandler.class));
	}

	static LlmQuotaException failure(String kind) {
		return switch (kind) {
			case "timeout" -> new QuotaWaitTimeoutException("openai", "us", "gpt-4o", "tokens-per-minute",
					"pool tokens-per-minute", Duration.ofSeconds(30), Duration.ofMillis(2_500));
			case "rate-limited" -> new RateLimitedException("openai", "us", "gpt-4o", "requests-per-minute",
					Duration.ofSeconds(12), "no attempt is left");
			case "exhausted" -> new QuotaExhaustedException("openai", "us", "gpt-4o", null, "credits spent",
					Instant.now().plus(Duration.ofHours(2)));
			case "exhausted-no-reset" -> new QuotaExhaustedException("openai", "us", "gpt-4o", null,
					"You exceeded your current quota in organization org-secret", null);
			case "budget" -> new BudgetExhaustedException("openai", "us", "gpt-4o", "budget-per-day", "account",
					Instant.now().plus(Duration.ofHours(5)));
			case "store" -> new QuotaStoreUnavailableException("openai", "us", "gpt-4o", "Redis does not answer");
			default -> new QuotaEngineClosedException("openai", "us", "gpt-4o");
		};
	}

	@Configuration(proxyBeanMethods = false)
	static class Failing {

		@Bean
		FailingController failingController() {
			return new FailingController();
		}

	}

	@RestController
	static class FailingController {

		@GetMapping("/fail/{kind}")
		String fail(@PathVariable String kind) {
			throw failure(kind);
		}

		@GetMapping("/local/{kind}")
		String local(@PathVariable String kind) {
			throw new LocalFailure(failure(kind));
		}

		@ExceptionHandler(LocalFailure.class)
		ResponseEntity<Map<String, String>> local(LocalFailure failure) {
			return ResponseEntity.status(HttpStatus.PAYMENT_REQUIRED).body(Map.of("handled", "locally"));
		}

	}

	static class LocalFailure extends RuntimeException {

		LocalFailure(Throwable cause) {
			super(cause);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnAdvice {

		@Bean
		Advice ownAdvice() {
			return new Advice();
		}

	}

	@ControllerAdvice
	static class Advice {

		@ExceptionHandler(QuotaWaitTimeoutException.class)
		ResponseEntity<Map<String, String>> timeout(QuotaWaitTimeoutException ex) {
			return ResponseEntity.status(HttpStatus.CONFLICT).body(Map.of("own", "handler"));
		}

	}

}
