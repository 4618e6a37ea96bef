package dev.llmquota.test.simulator.standalone;

import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.function.DoubleFunction;

import dev.llmquota.test.simulator.ProviderSimulator;
import dev.llmquota.test.simulator.clock.SimClock;

/**
 * The command line: {@code java -jar llm-quota-test-<version>-exec.jar --port 8089
 * --config sim.yml [--time-scale 10]}.
 */
public final class SimulatorMain {

	private SimulatorMain() {
	}

	/**
	 * Starts the simulator and serves until the process is stopped.
	 * @param args the command line
	 * @throws IOException if the configuration cannot be read
	 * @throws InterruptedException if interrupted while serving
	 */
	public static void main(String[] args) throws IOException, InterruptedException {
		ProviderSimulator simulator;
		try {
			simulator = start(args);
		}
		catch (IllegalArgumentException ex) {
			System.err.println("llm-quota simulator: " + ex.getMessage());
			System.err.println("usage: java -jar llm-quota-test-exec.jar [--port N] [--config sim.yml] "
					+ "[--time-scale X] [--host ADDRESS]");
			System.exit(2);
			return;
		}
		CountDownLatch stopped = new CountDownLatch(1);
		Runtime.getRuntime().addShutdownHook(new Thread(() -> {
			simulator.close();
			stopped.countDown();
		}, "simulator-shutdown"));
		System.out.println("llm-quota provider simulator listening on " + simulator.baseUrl());
		stopped.await();
	}

	/**
	 * Parses the command line and starts a simulator.
	 * @param args the command line
	 * @return the running simulator
	 * @throws IOException if the configuration cannot be read
	 */
	public static ProviderSimulator start(String... args) throws IOException {
		return start(SimClock::scaled, args);
	}

	/**
	 * Parses the command line and starts a simulator on the clock made for the resolved
	 * time scale.
	 */
	static ProviderSimulator start(DoubleFunction<SimClock> clockForScale, String... args) throws IOException {
		Path config = null;
		Integer port = null;
		Double timeScale = null;
		String host = null;
		for (int i = 0; i < args.length; i++) {
			String value = (i + 1 < args.length) ? args[i + 1] : null;
			switch (args[i]) {
				case "--port" -> port = Integer.valueOf(required(value, "--port"));
				case "--config" -> config = Path.of(required(value, "--config"));
				case "--time-scale" -> timeScale = Double.valueOf(required(value, "--time-scale"));
				case "--host" -> host = required(value, "--host");
				default -> throw new IllegalArgumentException("unknown option '" + args[i] + "'");
			}
			i++;
		}
		SimulatorConfig.Parsed parsed;
		try (Reader reader = (config != null) ? Files.newBufferedReader(config, StandardCharsets.UTF_8)
				: new StringReader("")) {
			parsed = SimulatorConfig.parse(reader);
		}
		double scale = (timeScale != null) ? timeScale : parsed.timeScale();
		if (host != null) {
			parsed.builder().host(host);
		}
		return parsed.builder().port((port != null) ? port : parsed.port()).clock(clockForScale.apply(scale)).start();
	}

	private static String required(String value, String option) {
		if (value == null) {
			throw new IllegalArgumentException(option + " needs a value");
		}
		return value;
	}

}
