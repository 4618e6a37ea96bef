package dev.llmquota.test.simulator.dialect;

import java.util.List;

/**
 * A dialect whose answers can also be streamed: the frames of a stream, paced by the
 * simulator's latency model.
 */
public interface StreamingDialect extends Dialect {

	/**
	 * The stream's content type.
	 * @return the content type
	 */
	String streamContentType();

	/**
	 * Frames sent before the first output token.
	 * @param call the call
	 * @param completion the answer
	 * @return raw frames, each complete with its separator
	 */
	List<String> streamHead(CallRequest call, Completion completion);

	/**
	 * A frame carrying some output text.
	 * @param call the call
	 * @param completion the answer
	 * @param text the text of this frame
	 * @return the raw frame
	 */
	String streamDelta(CallRequest call, Completion completion, String text);

	/**
	 * Frames after the last output token, usage included.
	 * @param call the call
	 * @param completion the answer
	 * @return raw frames
	 */
	List<String> streamTail(CallRequest call, Completion completion);

}
