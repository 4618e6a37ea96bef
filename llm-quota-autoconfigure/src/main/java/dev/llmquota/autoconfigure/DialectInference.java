package dev.llmquota.autoconfigure;

import java.net.URI;
import java.util.Locale;

import dev.llmquota.provider.DialectId;

/**
 * What a provider entry's {@code base-url} says about its dialect: the providers' own
 * hosts serve one dialect each, and some of them also serve an OpenAI-compatible API
 * under a path of their own (Ollama's {@code /v1}, Gemini's {@code /v1beta/openai},
 * Vertex's {@code endpoints/openapi}, Azure's and Bedrock's {@code /openai/v1}).
 *
 * @param dialect the dialect the URL decides, or {@code null} when neither host nor path
 * decides
 * @param openAiCompatible whether the URL's path is an OpenAI-compatible surface of that
 * host, where {@code openai} is the right dialect too
 */
record DialectInference(DialectId dialect, boolean openAiCompatible) {

	/** What nothing decides: any dialect may be configured; {@code openai} if none is. */
	static final DialectInference UNDECIDED = new DialectInference(null, false);

	/**
	 * Reads a base URL.
	 * @param baseUrl the entry's base URL
	 * @return what it decides
	 */
	static DialectInference of(URI baseUrl) {
		String host = (baseUrl.getHost() != null) ? baseUrl.getHost().toLowerCase(Locale.ROOT) : "";
		String path = (baseUrl.getPath() != null) ? baseUrl.getPath().toLowerCase(Locale.ROOT) : "";
		DialectId native_ = nativeDialect(host, baseUrl.getPort());
		if (native_ == null) {
			return UNDECIDED;
		}
		boolean compatible = switch (native_) {
			case OLLAMA -> path.startsWith("/v1");
			case GEMINI -> path.contains("/openai") || path.contains("/endpoints/openapi");
			case AZURE_OPENAI, BEDROCK -> path.startsWith("/openai/v1");
			case ANTHROPIC -> path.startsWith("/v1/chat");
			case OPENAI -> false;
		};
		return new DialectInference(compatible ? DialectId.OPENAI : native_, compatible);
	}

	/**
	 * Whether the provider behind a base URL sends no rate-limit headers (Ollama, Gemini
	 * and Vertex, Bedrock), in its own format or an OpenAI-compatible one: its limits are
	 * known only if configured.
	 * @param baseUrl the entry's base URL
	 * @return whether it sends none
	 */
	static boolean sendsNoRateLimitHeaders(URI baseUrl) {
		String host = (baseUrl.getHost() != null) ? baseUrl.getHost().toLowerCase(Locale.ROOT) : "";
		DialectId native_ = nativeDialect(host, baseUrl.getPort());
		return native_ == DialectId.OLLAMA || native_ == DialectId.GEMINI || native_ == DialectId.BEDROCK;
	}

	private static DialectId nativeDialect(String host, int port) {
		if (host.equals("api.openai.com")) {
			return DialectId.OPENAI;
		}
		if (host.endsWith(".openai.azure.com")) {
			return DialectId.AZURE_OPENAI;
		}
		if (host.equals("api.anthropic.com")) {
			return DialectId.ANTHROPIC;
		}
		if (host.startsWith("bedrock-runtime.") && host.endsWith(".amazonaws.com")) {
			return DialectId.BEDROCK;
		}
		if (host.equals("generativelanguage.googleapis.com") || host.endsWith("-aiplatform.googleapis.com")
				|| host.equals("aiplatform.googleapis.com")) {
			return DialectId.GEMINI;
		}
		if (port == 11434) {
			return DialectId.OLLAMA;
		}
		return null;
	}

	/**
	 * Returns whether a configured dialect agrees with the URL: an undecided URL takes
	 * any dialect; a provider's own host takes its dialect, or {@code openai} on its
	 * OpenAI-compatible path.
	 * @param configured the configured dialect
	 * @return whether they agree
	 */
	boolean allows(DialectId configured) {
		return this.dialect == null || configured == this.dialect;
	}

	/**
	 * Returns the public base URL of a dialect with one public host, or {@code null} for
	 * one whose URL names a resource or region (Azure, Bedrock) or a server (Ollama).
	 * @param dialect the dialect
	 * @return the base URL, or {@code null}
	 */
	static String publicBaseUrl(DialectId dialect) {
		return switch (dialect) {
			case OPENAI -> "https://api.openai.com";
			case ANTHROPIC -> "https://api.anthropic.com";
			case GEMINI -> "https://generativelanguage.googleapis.com";
			case AZURE_OPENAI, BEDROCK, OLLAMA -> null;
		};
	}

}
