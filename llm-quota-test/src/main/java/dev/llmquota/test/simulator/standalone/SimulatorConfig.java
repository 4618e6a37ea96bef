package dev.llmquota.test.simulator.standalone;

import java.io.Reader;
import java.time.Duration;
import java.time.ZoneId;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.llmquota.test.simulator.Fault;
import dev.llmquota.test.simulator.LatencyModel;
import dev.llmquota.test.simulator.ProviderSimulator;
import dev.llmquota.test.simulator.ProviderSimulatorBuilder;
import dev.llmquota.test.simulator.quota.Dimension;
import dev.llmquota.test.simulator.quota.Limits;
import dev.llmquota.test.simulator.quota.OutputPolicy;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Reads the simulator's YAML configuration into a {@link ProviderSimulatorBuilder};
 * unknown keys and bad values stop start-up with a message naming the key.
 */
public final class SimulatorConfig {

	private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m|h|d)");

	private static final Set<String> TOP_LEVEL = Set.of("port", "host", "time-scale", "window", "day-zone", "enforce",
			"exhausted", "seed", "latency", "account", "models", "dialects", "shared-team", "faults");

	private static final Set<String> OUTPUT_KEYS = Set.of("default-max-tokens", "output-burndown");

	private SimulatorConfig() {
	}

	/**
	 * Parses YAML into a builder; the port and time scale are returned separately.
	 * @param reader the YAML source
	 * @return the parsed configuration
	 */
	public static Parsed parse(Reader reader) {
		Object document = new Yaml(new SafeConstructor(new LoaderOptions())).load(reader);
		Map<String, Object> root = (document == null) ? Map.of() : map(document, "the document");
		unknown(root, TOP_LEVEL, "");
		ProviderSimulatorBuilder builder = ProviderSimulator.builder();
		Object host = root.get("host");
		if (host != null) {
			builder.host(host.toString());
		}
		if (root.containsKey("window")) {
			builder.window(duration(root.get("window"), "window"));
		}
		if (root.containsKey("day-zone")) {
			builder.dayZone(ZoneId.of(root.get("day-zone").toString()));
		}
		if (root.containsKey("enforce")) {
			builder.enforce(bool(root.get("enforce"), "enforce"));
		}
		if (root.containsKey("exhausted")) {
			builder.exhausted(bool(root.get("exhausted"), "exhausted"));
		}
		if (root.containsKey("seed")) {
			builder.seed(number(root.get("seed"), "seed"));
		}
		if (root.containsKey("account")) {
			builder.account(limits(map(root.get("account"), "account"), "account"));
		}
		map(root.getOrDefault("models", Map.of()), "models").forEach((model, limits) -> {
			Limits parsed = limits(map(limits, "models." + model), "models." + model);
			if ("default".equals(model)) {
				builder.defaultModel((template) -> copy(parsed, template));
			}
			else {
				builder.model(model, parsed);
			}
		});
		map(root.getOrDefault("dialects", Map.of()), "dialects").forEach((dialect, value) -> {
			Map<String, Object> policy = map(value, "dialects." + dialect);
			unknown(policy, Set.of("reserve-max-tokens", "refund-unused-output"), "dialects." + dialect + ".");
			builder.outputPolicy(dialect,
					new OutputPolicy(bool(policy.getOrDefault("reserve-max-tokens", true), "reserve-max-tokens"),
							bool(policy.getOrDefault("refund-unused-output", true), "refund-unused-output")));
		});
		if (root.containsKey("latency")) {
			builder.latency(latency(map(root.get("latency"), "latency")));
		}
		Object teams = root.get("shared-team");
		if (teams != null) {
			for (Object team : (teams instanceof List<?> list) ? list : List.of(teams)) {
				Map<String, Object> values = map(team, "shared-team");
				unknown(values, Set.of("model", "requests-per-minute", "tokens-per-minute"), "shared-team.");
				builder.sharedTeam(String.valueOf(values.get("model")),
						number(values.getOrDefault("requests-per-minute", 0), "shared-team.requests-per-minute"),
						number(values.getOrDefault("tokens-per-minute", 0), "shared-team.tokens-per-minute"));
			}
		}
		if (root.containsKey("faults")) {
			faults(map(root.get("faults"), "faults"), builder);
		}
		int port = (int) number(root.getOrDefault("port", 8089), "port");
		double timeScale = Double.parseDouble(root.getOrDefault("time-scale", 1.0).toString());
		return new Parsed(builder, port, timeScale);
	}

	private static Limits limits(Map<String, Object> values, String path) {
		Limits.Builder limits = Limits.builder();
		values.forEach((key, value) -> {
			if ("default-max-tokens".equals(key)) {
				limits.defaultMaxTokens(number(value, path + "." + key));
			}
			else if ("output-burndown".equals(key)) {
				limits.outputBurndown((int) number(value, path + "." + key));
			}
			else {
				try {
					limits.limit(Dimension.ofId(key), number(value, path + "." + key));
				}
				catch (IllegalArgumentException ex) {
					throw new IllegalArgumentException(path + "." + key + ": " + ex.getMessage()
							+ "; use a dimension of the contract or one of " + OUTPUT_KEYS, ex);
				}
			}
		});
		return limits.build();
	}

	private static void copy(Limits from, Limits.Builder to) {
		from.values().forEach(to::limit);
		to.defaultMaxTokens(from.defaultMaxTokens()).outputBurndown(from.outputBurndown());
	}

	private static LatencyModel latency(Map<String, Object> values) {
		unknown(values, Set.of("time-to-first-token", "per-output-token", "output-share", "output-tokens", "seed"),
				"latency.");
		LatencyModel.Builder latency = LatencyModel.builder();
		if (values.containsKey("time-to-first-token")) {
			latency.timeToFirstToken(duration(values.get("time-to-first-token"), "latency.time-to-first-token"));
		}
		if (values.containsKey("per-output-token")) {
			latency.perOutputToken(duration(values.get("per-output-token"), "latency.per-output-token"));
		}
		if (values.get("output-share") instanceof List<?> share && share.size() == 2) {
			latency.outputShare(Double.parseDouble(share.get(0).toString()),
					Double.parseDouble(share.get(1).toString()));
		}
		else if (values.containsKey("output-share")) {
			throw new IllegalArgumentException("latency.output-share: expected [min, max], for example [0.1, 0.5]");
		}
		if (values.containsKey("output-tokens")) {
			latency.fixedOutputTokens(number(values.get("output-tokens"), "latency.output-tokens"));
		}
		if (values.containsKey("seed")) {
			latency.seed(number(values.get("seed"), "latency.seed"));
		}
		return latency.build();
	}

	private static void faults(Map<String, Object> values, ProviderSimulatorBuilder builder) {
		values.forEach((key, value) -> {
			if ("header-delay".equals(key)) {
				builder.headerDelay(duration(value, "faults.header-delay"));
				return;
			}
			String name = key.replaceFirst("-rate$", "").replace('-', '_').toUpperCase(Locale.ROOT);
			try {
				builder.faultRate(Fault.valueOf(name), Double.parseDouble(value.toString()));
			}
			catch (IllegalArgumentException ex) {
				throw new IllegalArgumentException("faults." + key + ": expected header-delay or <fault>-rate with a "
						+ "share in [0, 1], faults being server-error, overloaded, drop-mid-stream, delay-headers, "
						+ "garbage-headers", ex);
			}
		});
	}

	/**
	 * Parses {@code 300ms}, {@code 10s}, {@code 2m}, {@code 1h}, {@code 1d} or ISO-8601.
	 * @param value the text
	 * @param key the key, for the error message
	 * @return the duration
	 */
	static Duration duration(Object value, String key) {
		String text = String.valueOf(value).trim();
		Matcher matcher = DURATION.matcher(text);
		if (matcher.matches()) {
			double amount = Double.parseDouble(matcher.group(1));
			double nanosPerUnit = switch (matcher.group(2)) {
				case "ms" -> 1e6;
				case "s" -> 1e9;
				case "m" -> 60e9;
				case "h" -> 3600e9;
				default -> 86400e9;
			};
			return Duration.ofNanos(Math.round(amount * nanosPerUnit));
		}
		try {
			return Duration.parse(text);
		}
		catch (RuntimeException ex) {
			throw new IllegalArgumentException(key + ": '" + text + "' is not a duration; write 300ms, 10s, 2m or 1h",
					ex);
		}
	}

	private static long number(Object value, String key) {
		if (value instanceof Number number) {
			return number.longValue();
		}
		try {
			return Long.parseLong(String.valueOf(value).replace("_", ""));
		}
		catch (NumberFormatException ex) {
			throw new IllegalArgumentException(key + ": '" + value + "' is not a whole number", ex);
		}
	}

	private static boolean bool(Object value, String key) {
		if (value instanceof Boolean bool) {
			return bool;
		}
		throw new IllegalArgumentException(key + ": '" + value + "' is not true or false");
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> map(Object value, String key) {
		if (value instanceof Map<?, ?> map) {
			map.keySet().forEach((name) -> {
				if (!(name instanceof String)) {
					throw new IllegalArgumentException(key + ": key '" + name + "' must be text; quote it");
				}
			});
			return (Map<String, Object>) map;
		}
		throw new IllegalArgumentException(key + ": expected a mapping, found '" + value + "'");
	}

	private static void unknown(Map<String, Object> values, Set<String> known, String prefix) {
		values.keySet().forEach((key) -> {
			if (!known.contains(key)) {
				throw new IllegalArgumentException("unknown key '" + prefix + key + "'; known keys are " + known);
			}
		});
	}

	/**
	 * A parsed configuration.
	 *
	 * @param builder the configured builder (port and clock not yet applied)
	 * @param port the port to bind
	 * @param timeScale how much faster than real time the clock runs
	 */
	public record Parsed(ProviderSimulatorBuilder builder, int port, double timeScale) {

	}

}
