package dev.llmquota.bench;

import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingType;
import dev.llmquota.client.CallPlan;
import dev.llmquota.client.GovernedCall;
import dev.llmquota.client.LlmQuotaCalls;
import dev.llmquota.client.ProviderEntry;
import dev.llmquota.core.QuotaPermit;
import dev.llmquota.provider.HeaderLookup;
import dev.llmquota.tokens.TokenEstimator;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.ConfigurableApplicationContext;

/**
 * llm-quota's own work for one call of the filter benchmark, without HTTP: the same
 * configuration, request and answer, one thread, in three parts: reading the request (its
 * entry and its plan: model, tokens, estimate), admission and release (the fast path),
 * and a whole governed call without the request (admission, the answer's headers and body
 * followed, the usage reconciled, release). Then the input estimate of a long prompt
 * ({@code o200k_base}, OpenAI's default), against jtokkit's count of the same text, which
 * llm-quota used before it split the text by hand. The rest of what the filter benchmark
 * measures is the {@code WebClient} integration around this: the body captured from the
 * caller's codecs, the attempt's request, the answer wrapped, Reactor's operators. Each
 * part warmed for 2 rounds, then measured for 5; figures are medians.
 */
final class CallPartsBenchmark {

	private static final int CALLS = 200_000;

	private static final int WARM_UP_ROUNDS = 2;

	private static final int ROUNDS = 5;

	/** The filter benchmark's request body, as the caller's codecs write it. */
	private static final byte[] REQUEST = JsonMapper.shared().writeValueAsBytes(FilterOverheadBenchmark.BODY);

	private static final byte[] ANSWER = FilterOverheadBenchmark.ANSWER.getBytes(StandardCharsets.UTF_8);

	/**
	 * A long prompt's text: prose, numbers, a little code and CJK, about 24,000
	 * characters.
	 */
	private static final String PROMPT = ("The quick brown fox jumps over the lazy dog's back, and then it's 2026-12-03: the"
			+ " model returned 1,234 tokens. Don't we'll they've I'm? R\u00E9sum\u00E9 na\u00EFve caf\u00E9 \u2014"
			+ " \u6771\u4EAC\u306F\u6674\u308C\u3002\n\n  def f(x):\n      return x*2  # comment\n")
		.repeat(120);

	/**
	 * Calls a round for the long prompt's count, which takes hundreds of microseconds.
	 */
	private static final int PROMPT_CALLS = 2_000;

	private static final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory
		.getThreadMXBean();

	private CallPartsBenchmark() {
	}

	static void run(Path results) throws Exception {
		ConfigurableApplicationContext context = FilterOverheadBenchmark.context("http://127.0.0.1:9", true);
		try {
			LlmQuotaCalls calls = context.getBean(LlmQuotaCalls.class);
			URI uri = URI.create("http://127.0.0.1:9/v1/chat/completions");
			Function<String, Object> noAttributes = (name) -> null;
			HeaderLookup noHeaders = (name) -> null;
			HeaderLookup json = (name) -> name.equalsIgnoreCase("Content-Type") ? "application/json" : null;
			ProviderEntry entry = calls.entry("POST", uri, noHeaders, noAttributes);
			CallPlan plan = calls.plan(entry, uri, REQUEST, noAttributes);
			long deadline = calls.deadline(plan, null);
			TokenEstimator o200k = TokenEstimator.of("o200k_base");
			Encoding jtokkit = Encodings.newLazyEncodingRegistry().getEncoding(EncodingType.O200K_BASE);
			List<Part> parts = List.of(new Part("request read (entry and plan)", CALLS, () -> {
				ProviderEntry found = calls.entry("POST", uri, noHeaders, noAttributes);
				calls.plan(found, uri, REQUEST, noAttributes);
			}), new Part("admission and release", CALLS, () -> calls.admit(plan, deadline).block().release()),
					new Part("admission, answer followed, release", CALLS, () -> {
						QuotaPermit permit = calls.admit(plan, deadline).block();
						GovernedCall call = calls.start(plan, permit);
						call.onResponse(200, json);
						call.onBody(ByteBuffer.wrap(ANSWER));
						call.onComplete();
					}),
					new Part(String.format(Locale.ROOT, "o200k count, %,d chars: llm-quota", PROMPT.length()),
							PROMPT_CALLS, () -> o200k.count(PROMPT)),
					new Part(String.format(Locale.ROOT, "o200k count, %,d chars: jtokkit", PROMPT.length()),
							PROMPT_CALLS, () -> jtokkit.countTokensOrdinary(PROMPT)));
			StringBuilder table = new StringBuilder(String.format(Locale.ROOT,
					"llm-quota's own work for one call of the filter benchmark, without HTTP, one thread: %,d calls a"
							+ " round (%,d for a long prompt's count), %d rounds of warm-up, then %d; every figure the median"
							+ " of the rounds%n%n",
					CALLS, PROMPT_CALLS, WARM_UP_ROUNDS, ROUNDS));
			table.append(String.format(Locale.ROOT, "%-40s %9s %12s%n", "part", "ns/call", "bytes/call"));
			double[][] figures = new double[parts.size()][];
			for (int i = 0; i < parts.size(); i++) {
				figures[i] = measure(parts.get(i).calls, parts.get(i).work);
				table.append(String.format(Locale.ROOT, "%-40s %,9.0f %,12.0f%n", parts.get(i).name, figures[i][0],
						figures[i][1]));
			}
			table.append(String.format(Locale.ROOT,
					"%nA whole call's own work (request read, then admission, answer and release): %,.0f ns and %,.0f"
							+ " bytes%n",
					figures[0][0] + figures[2][0], figures[0][1] + figures[2][1]));
			Files.createDirectories(results);
			Files.writeString(results.resolve("parts.txt"), table);
			System.out.print(table);
		}
		finally {
			context.close();
		}
	}

	/** Returns ns and bytes a call, each the median of the measured rounds. */
	private static double[] measure(int calls, Runnable work) {
		List<double[]> rounds = new ArrayList<>();
		for (int round = 0; round < WARM_UP_ROUNDS + ROUNDS; round++) {
			long bytes = threads.getCurrentThreadAllocatedBytes();
			long start = System.nanoTime();
			for (int i = 0; i < calls; i++) {
				work.run();
			}
			long nanos = System.nanoTime() - start;
			bytes = threads.getCurrentThreadAllocatedBytes() - bytes;
			if (round >= WARM_UP_ROUNDS) {
				rounds.add(new double[] { (double) nanos / calls, (double) bytes / calls });
			}
		}
		return Benchmarks.medians(rounds);
	}

	private record Part(String name, int calls, Runnable work) {

	}

}
