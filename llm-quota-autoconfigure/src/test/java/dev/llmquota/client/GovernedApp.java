package dev.llmquota.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.llmquota.core.QuotaEngine;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.restclient.RestTemplateBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * A Spring Boot application with nothing but auto-configuration and properties, as a user
 * of the starter has it.
 */
@Configuration(proxyBeanMethods = false)
@EnableAutoConfiguration
public class GovernedApp implements AutoCloseable {

	private final ConfigurableApplicationContext context;

	private GovernedApp(ConfigurableApplicationContext context) {
		this.context = context;
	}

	/**
	 * Starts the application with the given properties.
	 * @param properties {@code name=value} pairs
	 * @return the running application
	 */
	public static GovernedApp start(String... properties) {
		return start(WebApplicationType.NONE, properties);
	}

	/**
	 * Starts the application as a reactive web server on a free port, for its actuator.
	 * @param properties {@code name=value} pairs
	 * @return the running application
	 */
	public static GovernedApp startWeb(String... properties) {
		List<String> all = new ArrayList<>(List.of(properties));
		all.add("server.port=0");
		all.add("server.address=127.0.0.1");
		return start(WebApplicationType.REACTIVE, all.toArray(String[]::new));
	}

	/**
	 * Starts the application with beans of a configuration of the test's own, which win
	 * over the auto-configured ones they replace.
	 * @param configuration the configuration class
	 * @param properties {@code name=value} pairs
	 * @return the running application
	 */
	public static GovernedApp startWith(Class<?> configuration, String... properties) {
		return start(WebApplicationType.NONE, new Class<?>[] { GovernedApp.class, configuration }, properties);
	}

	private static GovernedApp start(WebApplicationType type, String... properties) {
		return start(type, new Class<?>[] { GovernedApp.class }, properties);
	}

	private static GovernedApp start(WebApplicationType type, Class<?>[] sources, String... properties) {
		List<String> all = new ArrayList<>(List.of(properties));
		all.add("spring.main.banner-mode=off");
		// Closing the context would otherwise wait out Reactor Netty's quiet period.
		all.add("spring.reactor.netty.shutdown-quiet-period=0s");
		SpringApplication application = new SpringApplicationBuilder(sources).web(type)
			.properties(all.toArray(String[]::new))
			.build();
		return new GovernedApp(application.run());
	}

	/**
	 * Event loops and connections of this application's own, as a replica in its own
	 * process has them; Reactor Netty's global ones would be disposed by whichever
	 * application in the JVM stops first.
	 * @return the resource factory
	 */
	@Bean
	ReactorResourceFactory reactorResourceFactory() {
		ReactorResourceFactory factory = new ReactorResourceFactory();
		factory.setUseGlobalResources(false);
		factory.setShutdownQuietPeriod(Duration.ZERO);
		return factory;
	}

	public WebClient webClient() {
		return this.context.getBean(WebClient.Builder.class).build();
	}

	/**
	 * Returns the base URL of the running server.
	 * @return the base URL
	 */
	public String serverUrl() {
		return "http://127.0.0.1:" + this.context.getEnvironment().getProperty("local.server.port");
	}

	public RestTemplate restTemplate() {
		return this.context.getBean(RestTemplateBuilder.class).build();
	}

	public RestClient restClient() {
		return this.context.getBean(RestClient.Builder.class).build();
	}

	public QuotaEngine engine() {
		return this.context.getBean(QuotaEngine.class);
	}

	public ConfigurableApplicationContext context() {
		return this.context;
	}

	@Override
	public void close() {
		this.context.close();
	}

}
