package dev.llmquota.client;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;

/**
 * A blocking answer's body on its way to the caller: every byte passes unchanged, and a
 * view of it goes to the call, which ends when the body is read to its end (or to its
 * declared length) or closed before it.
 */
public final class FollowingInputStream extends FilterInputStream {

	private final GovernedCall call;

	private final long contentLength;

	private long read;

	/**
	 * Follows a body.
	 * @param in the body
	 * @param call the call it answers
	 * @param contentLength the declared length, or -1 when none was declared
	 */
	public FollowingInputStream(InputStream in, GovernedCall call, long contentLength) {
		super(in);
		this.call = call;
		this.contentLength = contentLength;
	}

	@Override
	public int read() throws IOException {
		int next = readOrAbort(() -> super.read());
		if (next < 0) {
			this.call.onComplete();
		}
		else {
			this.read++;
			this.call.onBody(ByteBuffer.wrap(new byte[] { (byte) next }));
		}
		return next;
	}

	@Override
	public int read(byte[] buffer, int offset, int length) throws IOException {
		int count = readOrAbort(() -> super.read(buffer, offset, length));
		if (count < 0) {
			this.call.onComplete();
		}
		else if (count > 0) {
			this.read += count;
			this.call.onBody(ByteBuffer.wrap(buffer, offset, count));
		}
		return count;
	}

	/**
	 * Skips by reading: skipped bytes reach the call as read ones do (its usage may be in
	 * them).
	 */
	@Override
	public long skip(long count) throws IOException {
		byte[] scratch = new byte[(int) Math.min(Math.max(count, 0), 8192)];
		long skipped = 0;
		while (skipped < count) {
			int read = read(scratch, 0, (int) Math.min(scratch.length, count - skipped));
			if (read < 0) {
				break;
			}
			skipped += read;
		}
		return skipped;
	}

	/**
	 * Not supported, whatever the body's own stream supports: a byte read again after a
	 * reset would reach the call twice (Spring reads a body's first byte to tell whether
	 * it is empty, with mark and reset where the stream has them, and then its usage
	 * could not be read). Spring reads the byte through a pushback stream instead.
	 */
	@Override
	public boolean markSupported() {
		return false;
	}

	@Override
	public synchronized void mark(int readLimit) {
		// not supported
	}

	@Override
	public synchronized void reset() throws IOException {
		throw new IOException("mark/reset not supported");
	}

	@Override
	public void close() throws IOException {
		try {
			super.close();
		}
		finally {
			// a reader that stops at the declared length never sees the end of stream
			if (this.contentLength >= 0 && this.read >= this.contentLength) {
				this.call.onComplete();
			}
			else {
				this.call.onAbort();
			}
		}
	}

	private int readOrAbort(Read read) throws IOException {
		try {
			return read.read();
		}
		catch (IOException | RuntimeException ex) {
			this.call.onAbort();
			throw ex;
		}
	}

	@FunctionalInterface
	private interface Read {

		int read() throws IOException;

	}

}
