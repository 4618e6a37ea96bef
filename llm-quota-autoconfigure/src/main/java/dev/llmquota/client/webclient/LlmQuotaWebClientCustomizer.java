package dev.llmquota.client.webclient;

import java.util.List;

import dev.llmquota.client.LlmQuotaCalls;

import org.springframework.boot.webclient.WebClientCustomizer;
import org.springframework.http.codec.ClientCodecConfigurer;
import org.springframework.http.codec.HttpMessageWriter;
import org.springframework.web.reactive.function.client.ExchangeStrategies;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Adds llm-quota's filter to every auto-configured {@code WebClient.Builder}, with the
 * builder's own codecs, so request bodies are written exactly as the client would write
 * them.
 */
public final class LlmQuotaWebClientCustomizer implements WebClientCustomizer {

	private final LlmQuotaCalls calls;

	/**
	 * Creates the customizer.
	 * @param calls the calls facade
	 */
	public LlmQuotaWebClientCustomizer(LlmQuotaCalls calls) {
		this.calls = calls;
	}

	@Override
	public void customize(WebClient.Builder builder) {
		Codecs codecs = new Codecs();
		// A filter gets no codecs; the builder hands its configurer to us when it builds.
		builder.codecs(codecs::capture);
		builder.filter(new LlmQuotaExchangeFilterFunction(this.calls, codecs::writers));
	}

	/**
	 * Returns whether a builder carries llm-quota's filter.
	 * @param builder the builder
	 * @return whether its calls are governed
	 */
	public static boolean governs(WebClient.Builder builder) {
		boolean[] found = new boolean[1];
		builder.filters(
				(filters) -> found[0] = filters.stream().anyMatch(LlmQuotaExchangeFilterFunction.class::isInstance));
		return found[0];
	}

	/**
	 * The codecs of the builder: its configurer is handed over when the builder builds,
	 * and its writers are listed once, on the first call after that, rather than on every
	 * call.
	 */
	private static final class Codecs {

		private static final List<HttpMessageWriter<?>> DEFAULTS = ExchangeStrategies.withDefaults().messageWriters();

		private volatile ClientCodecConfigurer configurer;

		private volatile List<HttpMessageWriter<?>> writers;

		void capture(ClientCodecConfigurer configurer) {
			this.configurer = configurer;
			// customizers after this one may still change it: listed on first use
			this.writers = null;
		}

		List<HttpMessageWriter<?>> writers() {
			List<HttpMessageWriter<?>> listed = this.writers;
			if (listed == null) {
				ClientCodecConfigurer captured = this.configurer;
				listed = (captured != null) ? List.copyOf(captured.getWriters()) : DEFAULTS;
				this.writers = listed;
			}
			return listed;
		}

	}

}
