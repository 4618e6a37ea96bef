package dev.llmquota.bench;

import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import javax.imageio.ImageIO;

import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;
import reactor.netty.DisposableServer;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Where a governed call's CPU goes: the filter benchmark's governed client, warmed until
 * the JIT is quiet, then recorded with JFR (execution samples every millisecond) over
 * 40,000 calls from eight callers. The samples are drawn as an icicle graph (callers
 * above callees, width by samples, llm-quota's frames in orange) into
 * {@code profile.png}, and the frames that cost most are listed in {@code profile.txt}:
 * by self time, and llm-quota's by the time spent in and under them. Then what llm-quota
 * adds, frame by frame: the governed client and the baseline (Boot's builder without
 * llm-quota) recorded in turns, one caller each, every sample weighed by its run's CPU
 * per call, so each frame reads in microseconds of CPU a call, governed against baseline.
 */
final class GovernedPathProfile {

	private static final int CALLS = 40_000;

	/** Calls of each client in each of the difference's turns, with one caller. */
	private static final int TURN_CALLS = 15_000;

	private static final int TURNS = 4;

	private static final int WIDTH = 1600;

	private static final int ROW = 16;

	private static final int MAX_DEPTH = 80;

	private GovernedPathProfile() {
	}

	static void run(Path results) throws Exception {
		Files.createDirectories(results);
		Path jfr = Files.createTempFile("llm-quota-profile", ".jfr");
		DisposableServer server = FilterOverheadBenchmark.server();
		String base = "http://127.0.0.1:" + server.port();
		ConfigurableApplicationContext governed = FilterOverheadBenchmark.context(base, true);
		ConfigurableApplicationContext baseline = FilterOverheadBenchmark.context(base, false);
		int warmUp;
		List<List<String>> stacks;
		// per client (0: baseline, 1: governed): the frames' weights in us a call
		List<Map<String, Double>> added = List.of(new HashMap<>(), new HashMap<>());
		double[][] cpu = new double[TURNS][2];
		try {
			WebClient client = governed.getBean(WebClient.Builder.class).build();
			WebClient without = baseline.getBean(WebClient.Builder.class).build();
			String url = base + "/v1/chat/completions";
			// warmed as the filter benchmark warms its clients: until the JIT is quiet
			warmUp = FilterOverheadBenchmark.warm(List.of(without, client), url).calls();
			stacks = record(jfr, () -> FilterOverheadBenchmark.measure(client, url, 8, CALLS)).stacks();
			for (int turn = 0; turn < TURNS; turn++) {
				for (int i = 0; i < 2; i++) {
					WebClient turnClient = (i == 0) ? without : client;
					Recorded recorded = record(jfr,
							() -> FilterOverheadBenchmark.measure(turnClient, url, 1, TURN_CALLS));
					double perSample = recorded.figures().cpuPerCall() / Math.max(1, recorded.stacks().size()) / TURNS;
					cpu[turn][i] = recorded.figures().cpuPerCall();
					for (List<String> stack : recorded.stacks()) {
						for (String frame : new HashSet<>(stack)) {
							added.get(i).merge(frame, perSample, Double::sum);
						}
					}
				}
			}
		}
		finally {
			governed.close();
			baseline.close();
			server.disposeNow(Duration.ofSeconds(5));
			Files.deleteIfExists(jfr);
		}
		Node root = new Node("all");
		stacks.forEach((stack) -> root.add(stack, 0));
		String text = report(stacks, warmUp) + difference(added, cpu);
		Files.writeString(results.resolve("profile.txt"), text);
		draw(root, results.resolve("profile.png"));
		System.out.println(text);
	}

	/** Runs a client's calls under JFR's execution samples every millisecond. */
	private static Recorded record(Path jfr, Measure calls) throws Exception {
		FilterOverheadBenchmark.Figures figures;
		try (Recording recording = new Recording(Configuration.getConfiguration("default"))) {
			recording.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(1));
			recording.start();
			figures = calls.run();
			recording.stop();
			recording.dump(jfr);
		}
		List<List<String>> stacks = new ArrayList<>();
		for (RecordedEvent event : RecordingFile.readAllEvents(jfr)) {
			if (!event.getEventType().getName().equals("jdk.ExecutionSample")) {
				continue;
			}
			RecordedStackTrace trace = event.getStackTrace();
			if (trace == null) {
				continue;
			}
			List<String> stack = new ArrayList<>();
			List<RecordedFrame> frames = trace.getFrames();
			for (int i = frames.size() - 1; i >= 0; i--) {
				RecordedFrame frame = frames.get(i);
				if (frame.isJavaFrame()) {
					// one name for every instance of a lambda's hidden class
					String type = frame.getMethod().getType().getName().replaceAll("\\$\\$Lambda.*", "\\$\\$Lambda");
					stack.add(type + "." + frame.getMethod().getName());
				}
			}
			stacks.add(stack);
		}
		return new Recorded(stacks, figures);
	}

	/**
	 * The frames whose time in and under them differs most between the clients, in
	 * microseconds of CPU a call: llm-quota's, and what they call (Jackson, jtokkit).
	 */
	private static String difference(List<Map<String, Double>> perClient, double[][] cpu) {
		StringBuilder turns = new StringBuilder();
		for (double[] turn : cpu) {
			turns.append(
					String.format(Locale.ROOT, "%s%.1f against %.1f", turns.isEmpty() ? "" : "; ", turn[1], turn[0]));
		}
		StringBuilder text = new StringBuilder(String.format(Locale.ROOT,
				"%nWhat llm-quota adds, frame by frame: %d turns of %,d calls with one caller for each client,"
						+ " recorded alike; every sample weighs its run's CPU a call over its samples, and each"
						+ " frame reads as the mean over the turns. CPU a call with llm-quota against without, by"
						+ " turn (us): %s; the median of the turns' differences %+.1f us%n%n",
				TURNS, TURN_CALLS, turns,
				Benchmarks.median(Arrays.stream(cpu).mapToDouble((turn) -> turn[1] - turn[0]).toArray())));
		text.append(String.format(Locale.ROOT, "%9s %9s %9s  %s%n", "without", "with", "added", "frame (us a call)"));
		Set<String> frames = new HashSet<>(perClient.get(0).keySet());
		frames.addAll(perClient.get(1).keySet());
		frames.stream()
			.filter((frame) -> ours(frame) || frame.startsWith("tools.jackson") || frame.startsWith("com.knuddels"))
			.map((frame) -> Map.entry(frame,
					new double[] { perClient.get(0).getOrDefault(frame, 0.0),
							perClient.get(1).getOrDefault(frame, 0.0) }))
			.filter((entry) -> Math.abs(entry.getValue()[1] - entry.getValue()[0]) >= 0.5)
			.sorted(Comparator
				.comparingDouble((Map.Entry<String, double[]> entry) -> entry.getValue()[0] - entry.getValue()[1]))
			.limit(40)
			.forEach((entry) -> text.append(String.format(Locale.ROOT, "%9.1f %9.1f %+9.1f  %s%n", entry.getValue()[0],
					entry.getValue()[1], entry.getValue()[1] - entry.getValue()[0], entry.getKey())));
		return text.toString();
	}

	/** A run of calls. */
	@FunctionalInterface
	private interface Measure {

		FilterOverheadBenchmark.Figures run() throws Exception;

	}

	/** A run's stacks, callers first, and its figures. */
	private record Recorded(List<List<String>> stacks, FilterOverheadBenchmark.Figures figures) {

	}

	private static String report(List<List<String>> stacks, int warmUp) {
		Map<String, Integer> self = new HashMap<>();
		Map<String, Integer> inclusive = new HashMap<>();
		int withLlmQuota = 0;
		for (List<String> stack : stacks) {
			if (!stack.isEmpty()) {
				self.merge(stack.get(stack.size() - 1), 1, Integer::sum);
			}
			Set<String> seen = new HashSet<>();
			boolean ours = false;
			for (String frame : stack) {
				if (ours(frame) && seen.add(frame)) {
					inclusive.merge(frame, 1, Integer::sum);
					ours = true;
				}
			}
			withLlmQuota += ours ? 1 : 0;
		}
		int total = stacks.size();
		StringBuilder text = new StringBuilder(String.format(Locale.ROOT,
				"Governed path profile: JFR execution samples every 1 ms over %,d calls from 8 callers after %,d"
						+ " warm-up calls, until the JIT was quiet (the filter benchmark's governed client); %,d samples,"
						+ " %.1f%% of them with an llm-quota frame on the stack%n%n",
				CALLS, warmUp, total, 100.0 * withLlmQuota / Math.max(1, total)));
		text.append("Top frames by self time (% of all samples)\n");
		top(self, 20).forEach((entry) -> text.append(String.format(Locale.ROOT, "%6.1f%%  %s%n",
				100.0 * entry.getValue() / Math.max(1, total), entry.getKey())));
		text.append("\nllm-quota frames by time in and under them (% of all samples)\n");
		top(inclusive, 25).forEach((entry) -> text.append(String.format(Locale.ROOT, "%6.1f%%  %s%n",
				100.0 * entry.getValue() / Math.max(1, total), entry.getKey())));
		return text.toString();
	}

	/** llm-quota's own frames, not the benchmark's. */
	private static boolean ours(String frame) {
		return frame.startsWith("dev.llmquota.") && !frame.startsWith("dev.llmquota.bench.");
	}

	private static List<Map.Entry<String, Integer>> top(Map<String, Integer> counts, int limit) {
		return counts.entrySet()
			.stream()
			.sorted(Map.Entry.<String, Integer>comparingByValue(Comparator.reverseOrder()))
			.limit(limit)
			.toList();
	}

	/** One frame in the call tree, with the samples in and under it. */
	private static final class Node {

		final String name;

		final Map<String, Node> children = new LinkedHashMap<>();

		int samples;

		Node(String name) {
			this.name = name;
		}

		void add(List<String> stack, int depth) {
			this.samples++;
			if (depth < stack.size() && depth < MAX_DEPTH) {
				this.children.computeIfAbsent(stack.get(depth), Node::new).add(stack, depth + 1);
			}
		}

		int depth() {
			int deepest = 0;
			for (Node child : this.children.values()) {
				deepest = Math.max(deepest, child.depth());
			}
			return deepest + 1;
		}

	}

	private static void draw(Node root, Path png) throws IOException {
		int height = Math.min(root.depth(), MAX_DEPTH + 1) * ROW + 24;
		BufferedImage image = new BufferedImage(WIDTH, height, BufferedImage.TYPE_INT_RGB);
		Graphics2D graphics = image.createGraphics();
		graphics.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
		graphics.setColor(Color.WHITE);
		graphics.fillRect(0, 0, WIDTH, height);
		graphics.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
		graphics.setColor(Color.BLACK);
		graphics.drawString("Governed call, 8 callers: callers above callees, width = CPU samples; orange = llm-quota",
				4, 14);
		draw(graphics, root, 0, WIDTH, 20, root.samples);
		graphics.dispose();
		ImageIO.write(image, "png", png.toFile());
	}

	private static void draw(Graphics2D graphics, Node node, double x, double width, int y, int total) {
		if (width < 1) {
			return;
		}
		graphics.setColor(color(node.name));
		graphics.fillRect((int) x, y, Math.max(1, (int) width - 1), ROW - 1);
		FontMetrics metrics = graphics.getFontMetrics();
		String label = shortName(node.name);
		if (metrics.stringWidth(label) + 4 < width) {
			graphics.setColor(Color.BLACK);
			graphics.drawString(label, (int) x + 2, y + ROW - 4);
		}
		double childX = x;
		for (Node child : node.children.values()) {
			double childWidth = width * child.samples / node.samples;
			draw(graphics, child, childX, childWidth, y + ROW, total);
			childX += childWidth;
		}
	}

	private static String shortName(String frame) {
		int method = frame.lastIndexOf('.');
		int type = frame.lastIndexOf('.', method - 1);
		return ((type >= 0) ? frame.substring(type + 1) : frame).replace("$$Lambda.", " lambda.");
	}

	private static Color color(String frame) {
		if (ours(frame)) {
			return new Color(255, 160, 60);
		}
		if (frame.startsWith("reactor.") || frame.startsWith("io.netty.")) {
			return new Color(150, 190, 240);
		}
		if (frame.startsWith("org.springframework.")) {
			return new Color(160, 215, 150);
		}
		if (frame.startsWith("tools.jackson.") || frame.startsWith("com.fasterxml.")) {
			return new Color(205, 170, 230);
		}
		return new Color(215, 215, 215);
	}

}
