package dev.llmquota.sample;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings of the sample service and its demo run.
 */
@ConfigurationProperties("demo")
public class DemoProperties {

	/**
	 * The llm.quota provider entry the service calls (its base-url and dialect).
	 */
	private String provider = "openai";

	/**
	 * The model asked for summaries.
	 */
	private String model = "gpt-4o-mini";

	/**
	 * API key sent as a bearer token; empty for the simulator.
	 */
	private String apiKey = "";

	/**
	 * Output ceiling of a summary.
	 */
	private int maxTokens = 256;

	/**
	 * Whether the batch over the bundled corpus runs at start-up.
	 */
	private boolean runBatch = false;

	/**
	 * Whether the batch also runs without llm-quota first, to compare.
	 */
	private boolean contrast = false;

	/**
	 * Concurrent workers of the batch: far more than the quota admits.
	 */
	private int workers = 32;

	/**
	 * How many times the corpus is summarised in one batch.
	 */
	private int rounds = 1;

	/**
	 * How many of the corpus's documents a batch takes, smallest first; 0 for all.
	 */
	private int documents = 0;

	/**
	 * How often the console shows progress.
	 */
	private Duration progressInterval = Duration.ofMillis(500);

	private final Simulator simulator = new Simulator();

	/**
	 * Route the batch's calls go to (a key under llm.quota.routes), instead of
	 * demo.provider's entry; the ungoverned contrast run still calls demo.provider.
	 */
	private String route = "";

	/**
	 * More simulated deployments the routes profile starts in-process, by provider entry
	 * id, each its own account.
	 */
	private java.util.Map<String, Simulator> deployments = new java.util.LinkedHashMap<>();

	public String getProvider() {
		return this.provider;
	}

	public void setProvider(String provider) {
		this.provider = provider;
	}

	public String getModel() {
		return this.model;
	}

	public void setModel(String model) {
		this.model = model;
	}

	public String getApiKey() {
		return this.apiKey;
	}

	public void setApiKey(String apiKey) {
		this.apiKey = apiKey;
	}

	public int getMaxTokens() {
		return this.maxTokens;
	}

	public void setMaxTokens(int maxTokens) {
		this.maxTokens = maxTokens;
	}

	public boolean isRunBatch() {
		return this.runBatch;
	}

	public void setRunBatch(boolean runBatch) {
		this.runBatch = runBatch;
	}

	public boolean isContrast() {
		return this.contrast;
	}

	public void setContrast(boolean contrast) {
		this.contrast = contrast;
	}

	public int getWorkers() {
		return this.workers;
	}

	public void setWorkers(int workers) {
		this.workers = workers;
	}

	public int getRounds() {
		return this.rounds;
	}

	public void setRounds(int rounds) {
		this.rounds = rounds;
	}

	public int getDocuments() {
		return this.documents;
	}

	public void setDocuments(int documents) {
		this.documents = documents;
	}

	public Duration getProgressInterval() {
		return this.progressInterval;
	}

	public void setProgressInterval(Duration progressInterval) {
		this.progressInterval = progressInterval;
	}

	public Simulator getSimulator() {
		return this.simulator;
	}

	public String getRoute() {
		return this.route;
	}

	public void setRoute(String route) {
		this.route = route;
	}

	public java.util.Map<String, Simulator> getDeployments() {
		return this.deployments;
	}

	public void setDeployments(java.util.Map<String, Simulator> deployments) {
		this.deployments = deployments;
	}

	/**
	 * The provider simulator the demo profile starts in-process.
	 */
	public static class Simulator {

		/**
		 * Port on 127.0.0.1.
		 */
		private int port = 8089;

		/**
		 * Requests per minute of the simulated account.
		 */
		private long requestsPerMinute = 500;

		/**
		 * Tokens per minute of the simulated account: OpenAI's one combined pool of input
		 * and output, max_tokens reserved at admission.
		 */
		private long tokensPerMinute = 200_000;

		/**
		 * Time to the first token of an answer.
		 */
		private Duration timeToFirstToken = Duration.ofMillis(300);

		public int getPort() {
			return this.port;
		}

		public void setPort(int port) {
			this.port = port;
		}

		public long getRequestsPerMinute() {
			return this.requestsPerMinute;
		}

		public void setRequestsPerMinute(long requestsPerMinute) {
			this.requestsPerMinute = requestsPerMinute;
		}

		public long getTokensPerMinute() {
			return this.tokensPerMinute;
		}

		public void setTokensPerMinute(long tokensPerMinute) {
			this.tokensPerMinute = tokensPerMinute;
		}

		public Duration getTimeToFirstToken() {
			return this.timeToFirstToken;
		}

		public void setTimeToFirstToken(Duration timeToFirstToken) {
			this.timeToFirstToken = timeToFirstToken;
		}

	}

}
