package dev.llmquota.core;

import java.util.stream.LongStream;
import java.util.stream.Stream;

/**
 * Seeds for the property-based tests: reproducible by default, and a failing case can be
 * replayed alone with {@code -Dllmquota.seed=N}.
 */
public final class Seeds {

	private Seeds() {
	}

	public static Stream<Long> seeds() {
		String fixed = System.getProperty("llmquota.seed");
		if (fixed != null) {
			return Stream.of(Long.parseLong(fixed));
		}
		long base = Long.getLong("llmquota.seed.base", 20261130L);
		int count = Integer.getInteger("llmquota.seed.count", 100);
		return LongStream.range(base, base + count).boxed();
	}

}
