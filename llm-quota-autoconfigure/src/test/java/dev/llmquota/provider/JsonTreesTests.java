package dev.llmquota.provider;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A stream event, read without the object mapper, is the tree the mapper reads, and a
 * part that is not one JSON document is refused as the mapper refuses it.
 */
class JsonTreesTests {

	@Test
	void aStreamEventReadsAsTheMappersTree() {
		String event = """
				{"id":"c1","choices":[{"index":0,"delta":{"content":"Hi \\u00e9"},"finish_reason":null}],
				 "usage":{"prompt_tokens":12,"completion_tokens":3000000000,"total_tokens":3000000012},
				 "logprobs":[1.5,-2e-3,true,false,{}]}""";
		byte[] bytes = ("data: " + event + "\r").getBytes(StandardCharsets.UTF_8);
		assertThat(JsonTrees.read(bytes, 6, bytes.length - 7)).isEqualTo(JsonMapper.shared().readTree(event));
	}

	@Test
	void aPartThatIsNotOneDocumentIsRefusedAndNothingIsNoTree() {
		byte[] two = "{\"a\":1} {\"b\":2}".getBytes(StandardCharsets.UTF_8);
		assertThatThrownBy(() -> JsonTrees.read(two, 0, two.length)).isInstanceOf(JacksonException.class);
		byte[] cut = "{\"a\":[1,".getBytes(StandardCharsets.UTF_8);
		assertThatThrownBy(() -> JsonTrees.read(cut, 0, cut.length)).isInstanceOf(JacksonException.class);
		byte[] blank = "  ".getBytes(StandardCharsets.UTF_8);
		assertThat(JsonTrees.read(blank, 0, blank.length)).isNull();
	}

}
