package dev.llmquota.test.simulator.dialect;

import java.util.List;

/**
 * The answers and stream frames that OpenAI and Azure OpenAI share: Chat Completions
 * ({@link ChatCompletionsWire}), embeddings ({@link EmbeddingsWire}) and, where routed,
 * Responses ({@link ResponsesWire}); the two differ in routes, headers and refusals.
 */
abstract class ChatCompletionsDialect implements StreamingDialect {

	@Override
	public String newMessageId(CallRequest call) {
		return (call.operation() == Operation.RESPONSES) ? ResponsesWire.responseId()
				: ChatCompletionsWire.completionId();
	}

	@Override
	public String completionBody(CallRequest call, Completion completion) {
		return switch (call.operation()) {
			case CHAT -> ChatCompletionsWire.completionBody(completion);
			case RESPONSES -> ResponsesWire.body(call, completion);
			case EMBEDDINGS -> EmbeddingsWire.body(call, completion);
		};
	}

	@Override
	public String streamContentType() {
		return "text/event-stream; charset=utf-8";
	}

	@Override
	public List<byte[]> streamHead(CallRequest call, Completion completion) {
		return (call.operation() == Operation.RESPONSES) ? ResponsesWire.streamHead(call, completion)
				: ChatCompletionsWire.streamHead(call, completion);
	}

	@Override
	public byte[] streamDelta(CallRequest call, Completion completion, int position, String text) {
		return (call.operation() == Operation.RESPONSES) ? ResponsesWire.streamDelta(completion, position, text)
				: ChatCompletionsWire.streamDelta(call, completion, text);
	}

	@Override
	public List<byte[]> streamTail(CallRequest call, Completion completion, int position) {
		return (call.operation() == Operation.RESPONSES) ? ResponsesWire.streamTail(call, completion, position)
				: ChatCompletionsWire.streamTail(call, completion);
	}

}
