package dev.llmquota.test.simulator.dialect;

import java.util.List;

/**
 * A dialect whose answers can also be streamed: the frames of a stream, as the bytes sent
 * on the wire (UTF-8 text for SSE and NDJSON, binary messages for AWS event streams),
 * paced by the simulator's latency model.
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
	List<byte[]> streamHead(CallRequest call, Completion completion);

	/**
	 * A frame carrying some output text.
	 * @param call the call
	 * @param completion the answer
	 * @param position how many frames the stream sent before this one
	 * @param text the text of this frame
	 * @return the raw frame
	 */
	byte[] streamDelta(CallRequest call, Completion completion, int position, String text);

	/**
	 * Frames after the last output token, usage included.
	 * @param call the call
	 * @param completion the answer
	 * @param position how many frames the stream sent before the first of these
	 * @return raw frames
	 */
	List<byte[]> streamTail(CallRequest call, Completion completion, int position);

}
