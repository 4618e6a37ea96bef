package dev.llmquota.test.simulator;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;

import dev.llmquota.test.simulator.dialect.Json;
import tools.jackson.databind.JsonNode;

/**
 * A plain JDK HTTP client for tests, talking to the simulator on loopback only.
 */
final class SimHttp {

	private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private SimHttp() {
	}

	static HttpResponse<String> post(ProviderSimulator simulator, String path, String body) {
		try {
			return CLIENT.send(request(simulator, path, body), HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Sends without waiting: the future completes when headers arrive, the body stays
	 * open.
	 */
	static CompletableFuture<HttpResponse<InputStream>> open(ProviderSimulator simulator, String path, String body) {
		return CLIENT.sendAsync(request(simulator, path, body), HttpResponse.BodyHandlers.ofInputStream());
	}

	static String readAll(HttpResponse<InputStream> response) {
		try (BufferedReader reader = new BufferedReader(
				new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
			return reader.lines().collect(Collectors.joining("\n", "", "\n"));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	static JsonNode json(HttpResponse<String> response) {
		return Json.MAPPER.readTree(response.body());
	}

	private static HttpRequest request(ProviderSimulator simulator, String path, String body) {
		return HttpRequest.newBuilder(URI.create(simulator.baseUrl() + path))
			.header("content-type", "application/json")
			.timeout(Duration.ofSeconds(20))
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build();
	}

	static String openAi(String model, int maxTokens, boolean stream) {
		return "{\"model\":\"" + model + "\",\"max_tokens\":" + maxTokens + ",\"stream\":" + stream
				+ ",\"stream_options\":{\"include_usage\":true},\"messages\":[{\"role\":\"user\",\"content\":\"Say hello\"}]}";
	}

	static String anthropic(String model, int maxTokens, boolean stream) {
		return "{\"model\":\"" + model + "\",\"max_tokens\":" + maxTokens + ",\"stream\":" + stream
				+ ",\"messages\":[{\"role\":\"user\",\"content\":\"Say hello to the simulator\"}]}";
	}

	static String bedrock(int maxTokens) {
		return "{\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"Say hello to the simulator\"}]}],"
				+ "\"inferenceConfig\":{\"maxTokens\":" + maxTokens + "}}";
	}

	static String gemini(int maxTokens) {
		return "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Say hello to the simulator\"}]}],"
				+ "\"generationConfig\":{\"maxOutputTokens\":" + maxTokens + "}}";
	}

	static String ollama(String model, int maxTokens, boolean stream) {
		return "{\"model\":\"" + model + "\",\"stream\":" + stream + ",\"options\":{\"num_predict\":" + maxTokens
				+ "},\"messages\":[{\"role\":\"user\",\"content\":\"Say hello to the simulator\"}]}";
	}

}
