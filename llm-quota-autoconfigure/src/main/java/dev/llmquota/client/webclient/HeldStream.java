package dev.llmquota.client.webclient;

import java.util.ArrayList;
import java.util.List;

import dev.llmquota.client.StreamHead;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Sinks;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;

/**
 * A stream held back from the caller until its head tells whether it refuses the call:
 * the buffers read so far are kept, and the rest is relayed once the caller subscribes,
 * so the caller receives every byte, in order, exactly once.
 */
final class HeldStream extends BaseSubscriber<DataBuffer> {

	private final StreamHead head;

	private final MonoSink<Flux<DataBuffer>> decided;

	private final List<DataBuffer> held = new ArrayList<>();

	private final Sinks.Many<DataBuffer> rest = Sinks.many().unicast().onBackpressureBuffer();

	/** Whether the head was handed on; guarded by {@link #held}. */
	private boolean told;

	/** Whether the caller went before the head told; guarded by {@link #held}. */
	private boolean cancelled;

	private HeldStream(StreamHead head, MonoSink<Flux<DataBuffer>> decided) {
		this.head = head;
		this.decided = decided;
	}

	/**
	 * Reads a body's head; the {@link Mono} gives the whole body once the head is
	 * complete, or the body's error if it fails before.
	 * @param body the answer's body
	 * @param head the head to feed
	 * @return the whole body, its head first
	 */
	static Mono<Flux<DataBuffer>> read(Flux<DataBuffer> body, StreamHead head) {
		return Mono.create((sink) -> {
			HeldStream stream = new HeldStream(head, sink);
			sink.onCancel(stream);
			body.subscribe(stream);
		});
	}

	@Override
	protected void hookOnSubscribe(Subscription subscription) {
		subscription.request(Long.MAX_VALUE);
	}

	@Override
	protected void hookOnNext(DataBuffer buffer) {
		Flux<DataBuffer> whole = null;
		synchronized (this.held) {
			if (this.cancelled) {
				// on its way as the caller went: nobody will read it
				DataBufferUtils.release(buffer);
				return;
			}
			if (!this.told) {
				this.held.add(buffer);
				boolean complete = false;
				try (DataBuffer.ByteBufferIterator iterator = buffer.readableByteBuffers()) {
					while (iterator.hasNext()) {
						complete = this.head.feed(iterator.next());
					}
				}
				if (!complete) {
					return;
				}
				whole = tell();
			}
		}
		if (whole != null) {
			this.decided.success(whole);
		}
		else {
			this.rest.tryEmitNext(buffer);
		}
	}

	@Override
	protected void hookOnComplete() {
		Flux<DataBuffer> whole = null;
		synchronized (this.held) {
			if (!this.told && !this.cancelled) {
				this.head.end();
				whole = tell();
			}
		}
		if (whole != null) {
			this.decided.success(whole);
		}
		this.rest.tryEmitComplete();
	}

	@Override
	protected void hookOnError(Throwable error) {
		if (drop(false)) {
			this.decided.error(error);
			return;
		}
		this.rest.tryEmitError(error);
	}

	/**
	 * The caller went before the head told (a reasoning model's stream sends only events
	 * that tell nothing while it thinks): what was held goes back to its pool.
	 */
	@Override
	protected void hookOnCancel() {
		drop(true);
	}

	/**
	 * Gives the held buffers back, unless the head was handed on; returns whether.
	 * @param cancelled whether the caller went: buffers still on their way go back too
	 */
	private boolean drop(boolean cancelled) {
		synchronized (this.held) {
			if (this.told) {
				return false;
			}
			this.told = true;
			this.cancelled = cancelled;
			this.held.forEach(DataBufferUtils::release);
			this.held.clear();
			return true;
		}
	}

	/** The whole body, its head first; called with the lock held, once. */
	private Flux<DataBuffer> tell() {
		this.told = true;
		List<DataBuffer> head = List.copyOf(this.held);
		this.held.clear();
		return Flux.concat(Flux.fromIterable(head), this.rest.asFlux()).doOnCancel(this::dispose);
	}

}
