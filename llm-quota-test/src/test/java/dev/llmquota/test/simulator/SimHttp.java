package dev.llmquota.test.simulator;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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

	static HttpResponse<byte[]> postBytes(ProviderSimulator simulator, String path, String body) {
		try {
			return CLIENT.send(request(simulator, path, body), HttpResponse.BodyHandlers.ofByteArray());
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

	/**
	 * Sends and collects every body byte that arrives until the body ends or fails;
	 * unlike an input stream, it keeps what arrived just before a dropped connection.
	 */
	static Received receive(ProviderSimulator simulator, String path, String body) {
		ByteArrayOutputStream bytes = new ByteArrayOutputStream();
		CompletableFuture<Throwable> end = new CompletableFuture<>();
		AtomicInteger status = new AtomicInteger();
		Flow.Subscriber<List<ByteBuffer>> collector = new Flow.Subscriber<>() {

			@Override
			public void onSubscribe(Flow.Subscription subscription) {
				subscription.request(Long.MAX_VALUE);
			}

			@Override
			public void onNext(List<ByteBuffer> buffers) {
				for (ByteBuffer buffer : buffers) {
					byte[] chunk = new byte[buffer.remaining()];
					buffer.get(chunk);
					bytes.writeBytes(chunk);
				}
			}

			@Override
			public void onError(Throwable failure) {
				end.complete(failure);
			}

			@Override
			public void onComplete() {
				end.complete(null);
			}

		};
		CLIENT.sendAsync(request(simulator, path, body), (info) -> {
			status.set(info.statusCode());
			return HttpResponse.BodySubscribers.fromSubscriber(collector);
		});
		Throwable failure = end.orTimeout(20, TimeUnit.SECONDS).join();
		return new Received(status.get(), bytes.toByteArray(), failure);
	}

	/**
	 * A body as far as it arrived.
	 *
	 * @param status the HTTP status
	 * @param body the bytes received
	 * @param failure why the body ended early, or {@code null} if it was complete
	 */
	record Received(int status, byte[] body, Throwable failure) {
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

	static String responses(String model, int maxOutputTokens, boolean stream) {
		return "{\"model\":\"" + model + "\",\"max_output_tokens\":" + maxOutputTokens + ",\"stream\":" + stream
				+ ",\"input\":\"Say hello to the simulator\"}";
	}

	static String anthropicInvoke(int maxTokens) {
		return "{\"anthropic_version\":\"bedrock-2023-05-31\",\"max_tokens\":" + maxTokens
				+ ",\"system\":\"Be brief.\",\"messages\":[{\"role\":\"user\",\"content\":\"Say hello to the simulator\"}]}";
	}

	static String ollama(String model, int maxTokens, boolean stream) {
		return "{\"model\":\"" + model + "\",\"stream\":" + stream + ",\"options\":{\"num_predict\":" + maxTokens
				+ "},\"messages\":[{\"role\":\"user\",\"content\":\"Say hello to the simulator\"}]}";
	}

}
