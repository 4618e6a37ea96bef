package dev.llmquota.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;

/**
 * A small service that summarises documents through a governed {@code WebClient}: one
 * call at a time for people ({@code POST /summaries}) and a batch over a bundled corpus.
 * The {@code demo} profile (the default) runs it offline against the embedded provider
 * simulator.
 */
@SpringBootApplication
@EnableConfigurationProperties(DemoProperties.class)
public class SampleApplication {

	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

}
