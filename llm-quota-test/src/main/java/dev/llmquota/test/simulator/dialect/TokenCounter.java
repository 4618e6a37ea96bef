package dev.llmquota.test.simulator.dialect;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingRegistry;
import com.knuddels.jtokkit.api.EncodingType;

/**
 * Input counting: real BPE encodings (JTokkit) for the OpenAI family, and a character
 * heuristic for providers whose tokenizers are not public.
 */
public final class TokenCounter {

	/** Characters per token of the heuristic. */
	public static final int CHARS_PER_TOKEN = 4;

	/** Tokens each chat message adds besides its text (role and separators). */
	public static final int PER_MESSAGE = 3;

	private static final class Registry {

		private static final EncodingRegistry INSTANCE = Encodings.newLazyEncodingRegistry();

	}

	private TokenCounter() {
	}

	/**
	 * Counts with the model's OpenAI encoding: {@code cl100k_base} for GPT-4, GPT-3.5 and
	 * the {@code text-embedding-*} models, {@code o200k_base} for everything newer.
	 * @param model the model id
	 * @param text the text
	 * @return the token count
	 */
	public static long openAi(String model, String text) {
		return encodingFor(model).countTokensOrdinary(text);
	}

	private static Encoding encodingFor(String model) {
		boolean legacy = model.startsWith("gpt-3.5") || model.startsWith("text-embedding") || (model.startsWith("gpt-4")
				&& !model.startsWith("gpt-4o") && !model.startsWith("gpt-4.1") && !model.startsWith("gpt-4.5"));
		return Registry.INSTANCE.getEncoding(legacy ? EncodingType.CL100K_BASE : EncodingType.O200K_BASE);
	}

	/**
	 * The heuristic: characters divided by {@value #CHARS_PER_TOKEN}, rounded up.
	 * @param text the text
	 * @return the estimated count
	 */
	public static long heuristic(String text) {
		return (text.length() + CHARS_PER_TOKEN - 1) / CHARS_PER_TOKEN;
	}

}
