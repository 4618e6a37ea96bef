package dev.llmquota.tokens;

import java.util.Locale;

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

	private final O200kCounter o200k;

	private final Encoding encoding;

	private final double charsPerToken;

	private TokenEstimator(String spec, O200kCounter o200k, Encoding encoding, double charsPerToken) {
		this.spec = spec;
		this.o200k = o200k;
		this.encoding = encoding;
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
			return new TokenEstimator(value, O200kCounter.get(), null, 0);
		}
		if (value.equals("cl100k_base")) {
			return new TokenEstimator(value, null, Registry.INSTANCE.getEncoding(EncodingType.CL100K_BASE), 0);
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
				return new TokenEstimator(value, null, null, chars);
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
		if (this.o200k != null) {
			return this.o200k.count(text);
		}
		if (this.encoding != null) {
			return this.encoding.countTokensOrdinary(text);
		}
		return (long) Math.ceil(text.length() / this.charsPerToken);
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
		return (long) Math.ceil(chars / ((this.charsPerToken > 0) ? this.charsPerToken : 4.0));
	}

	private static final class Registry {

		// Loaded on first use: the encodings' tables take a moment and some memory.
		static final EncodingRegistry INSTANCE = Encodings.newLazyEncodingRegistry();

	}

}
