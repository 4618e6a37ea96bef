package dev.llmquota.client;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.llmquota.core.QuotaEngine;
import dev.llmquota.test.simulator.ProviderSimulator;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.service.annotation.PostExchange;
import org.springframework.web.service.registry.HttpServiceGroup;
import org.springframework.web.service.registry.ImportHttpServices;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Declarative HTTP interface clients that Spring Boot builds on WebClient are governed
 * too.
 */
class HttpServiceClientTests {

	@Test
	void anHttpInterfaceClientOnWebClientIsGoverned() {
		try (ProviderSimulator sim = ProviderSimulator.builder().start();
				ConfigurableApplicationContext context = new SpringApplicationBuilder(HttpServiceApp.class)
					.web(WebApplicationType.NONE)
					.properties("spring.main.banner-mode=off", "spring.reactor.netty.shutdown-quiet-period=0s",
							"spring.http.serviceclient.llm.base-url=" + sim.baseUrl(),
							"llm.quota.providers.openai.base-url=" + sim.baseUrl(),
							"llm.quota.providers.openai.models.gpt-4o.tokens-per-minute=60000")
					.run()) {
			String answer = context.getBean(ChatApi.class)
				.complete(Map.of("model", "gpt-4o", "max_tokens", 100, "messages",
						List.of(Map.of("role", "user", "content", "Hello"))))
				.block(Duration.ofSeconds(10));
			assertThat(answer).contains("usage");
			QuotaEngine engine = context.getBean(QuotaEngine.class);
			// the call was admitted, its usage read and its estimate compared: it went
			// through the filter
			assertThat(engine.pool("openai", "gpt-4o").drift().samples()).isEqualTo(1);
			assertThat(engine.pool("openai", "gpt-4o").stats().billedOutput()).isPositive();
		}
	}

	interface ChatApi {

		@PostExchange("/v1/chat/completions")
		Mono<String> complete(@RequestBody Map<String, Object> body);

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@ImportHttpServices(group = "llm", types = ChatApi.class, clientType = HttpServiceGroup.ClientType.WEB_CLIENT)
	static class HttpServiceApp {

	}

}
