package dev.llmquota.test.simulator.dialect;

import java.util.List;

/**
 * The answers and stream frames that OpenAI and Azure OpenAI share: both speak the Chat
 * Completions wire ({@link ChatCompletionsWire}) and differ in routes, headers and
 * refusals.
 */
abstract class ChatCompletionsDialect implements StreamingDialect {

	@Override
	public String completionBody(CallRequest call, Completion completion) {
		return ChatCompletionsWire.completionBody(completion);
	}

	@Override
	public String streamContentType() {
		return "text/event-stream; charset=utf-8";
	}

	@Override
	public List<String> streamHead(CallRequest call, Completion completion) {
		return ChatCompletionsWire.streamHead(call, completion);
	}

	@Override
	public String streamDelta(CallRequest call, Completion completion, String text) {
		return ChatCompletionsWire.streamDelta(call, completion, text);
	}

	@Override
	public List<String> streamTail(CallRequest call, Completion completion) {
		return ChatCompletionsWire.streamTail(call, completion);
	}

}
