package dev.llmquota.test.simulator.dialect;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A complete HTTP answer: status, headers (content type included) and body text.
 *
 * @param status the HTTP status
 * @param headers the headers in order
 * @param body the body
 */
public record Reply(int status, Map<String, String> headers, String body) {

	/**
	 * A JSON reply.
	 * @param status the status
	 * @param headers headers besides the content type
	 * @param body the JSON text
	 * @return the reply
	 */
	public static Reply json(int status, Map<String, String> headers, String body) {
		Map<String, String> all = new LinkedHashMap<>();
		all.put("content-type", "application/json");
		all.putAll(headers);
		return new Reply(status, all, body);
	}

}
