package dev.llmquota.tokens;

import java.util.Locale;
import java.util.function.ToLongFunction;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingRegistry;
import com.knuddels.jtokkit.api.EncodingType;

/**
 * Estimates the input tokens of a call: a real BPE encoding ({@code o200k_base}, counted
 * as jtokkit counts it by {@link O200kCounter}; {@code cl100k_base}, by jtokkit) where it
 * fits the model, a characters-per-token heuristic ({@code chars:4}) otherwise, plus the
 * per-message overhead chat formats add.
 */
public final class TokenEstimator {

	/** Tokens a chat format adds per message (role and separators), and once per call. */
	static final int PER_MESSAGE = 3;

	static final int PER_CALL = 3;

	/** The fewest characters a token takes that chars:N accepts. */
	static final double MIN_CHARS = 0.25;

	/** The most characters a token takes that chars:N accepts. */
	static final double MAX_CHARS = 10;

	private final String spec;

	/** Counts a text that is not empty. */
	private final ToLongFunction<String> counter;

	/** The characters a token takes by this estimator's measure of output. */
	private final double charsPerToken;

	private TokenEstimator(String spec, ToLongFunction<String> counter, double charsPerToken) {
		this.spec = spec;
		this.counter = counter;
		this.charsPerToken = charsPerToken;
	}

	/**
	 * Returns the estimator a tokenizer setting names.
	 * @param spec {@code o200k_base}, {@code cl100k_base} or {@code chars:N}
	 * @return the estimator
	 * @throws IllegalArgumentException if the setting names no estimator
	 */
	public static TokenEstimator of(String spec) {
		String value = spec.trim().toLowerCase(Locale.ROOT);
		if (value.equals("o200k_base")) {
			return new TokenEstimator(value, O200kCounter.get()::count, 4);
		}
		if (value.equals("cl100k_base")) {
			Encoding encoding = Registry.INSTANCE.getEncoding(EncodingType.CL100K_BASE);
			return new TokenEstimator(value, encoding::countTokensOrdinary, 4);
		}
		if (value.startsWith("chars:")) {
			double chars;
			try {
				chars = Double.parseDouble(value.substring("chars:".length()));
			}
			catch (NumberFormatException ex) {
				chars = -1;
			}
			if (chars >= MIN_CHARS && chars <= MAX_CHARS) {
				double perToken = chars;
				return new TokenEstimator(value, (text) -> (long) Math.ceil(text.length() / perToken), chars);
			}
			// 4,000 would count a long prompt as a few tokens, 0.001 a word as thousands
			throw new IllegalArgumentException(
					"chars:N takes 0.25 to 10 characters per token (about 4 for English, 3 for code, 1 for Chinese or"
							+ " Japanese)");
		}
		throw new IllegalArgumentException("no such tokenizer");
	}

	/**
	 * Returns the tokenizer setting this estimator was made from.
	 * @return the setting
	 */
	public String spec() {
		return this.spec;
	}

	/**
	 * Counts the tokens of a text.
	 * @param text the text
	 * @return the tokens
	 */
	public long count(String text) {
		if (text == null || text.isEmpty()) {
			return 0;
		}
		return this.counter.applyAsLong(text);
	}

	/**
	 * Estimates a call's input tokens.
	 * @param text the input text
	 * @param structure tool and schema definitions
	 * @param messages the number of messages
	 * @return the estimate
	 */
	public long estimate(String text, String structure, int messages) {
		return estimate(text, structure, messages, 0);
	}

	/**
	 * Returns the input tokens of a request whose input also holds tokens counted apart
	 * (token ids, media).
	 * @param text the input text
	 * @param structure tool and schema definitions
	 * @param messages the number of messages
	 * @param counted tokens counted without this tokenizer
	 * @return the estimated input tokens
	 */
	public long estimate(String text, String structure, int messages, long counted) {
		return count(text) + count(structure) + (long) PER_MESSAGE * messages + PER_CALL + counted;
	}

	/**
	 * Returns the tokens a stream of the given characters of output carries, by this
	 * estimator's measure of text, for an answer whose usage never arrived.
	 * @param chars the characters of output seen
	 * @return the estimated output tokens
	 */
	public long outputTokens(long chars) {
		return (long) Math.ceil(chars / this.charsPerToken);
	}

	private static final class Registry {

		// Loaded on first use: the encodings' tables take a moment and some memory.
		static final EncodingRegistry INSTANCE = Encodings.newLazyEncodingRegistry();

	}

}
