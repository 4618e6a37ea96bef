package dev.llmquota.test.simulator.dialect;

import java.util.List;

/**
 * The dialects the simulator serves; adding a provider means adding one class here.
 */
public final class Dialects {

	private Dialects() {
	}

	/**
	 * One instance of every dialect, in routing order.
	 * @return the dialects
	 */
	public static List<Dialect> all() {
		return List.of(new OpenAiDialect(), new AzureOpenAiDialect(), new AnthropicDialect(), new BedrockDialect(),
				new GeminiDialect(), new OllamaDialect());
	}

}
