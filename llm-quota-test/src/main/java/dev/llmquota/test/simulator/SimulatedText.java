package dev.llmquota.test.simulator;

/**
 * The text of simulated answers, one word per output token.
 */
final class SimulatedText {

	private static final String[] WORDS = { "Lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing",
			"elit", "sed", "do", "eiusmod", "tempor", "incididunt", "ut", "labore", "et", "dolore", "magna", "aliqua" };

	private SimulatedText() {
	}

	static String token(int index) {
		String word = WORDS[index % WORDS.length];
		return (index == 0) ? word : " " + word.toLowerCase(java.util.Locale.ROOT);
	}

}
