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

	private boolean told;

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
		if (this.told) {
			this.rest.tryEmitNext(buffer);
			return;
		}
		this.held.add(buffer);
		boolean complete = false;
		try (DataBuffer.ByteBufferIterator iterator = buffer.readableByteBuffers()) {
			while (iterator.hasNext()) {
				complete = this.head.feed(iterator.next());
			}
		}
		if (complete) {
			tell();
		}
	}

	@Override
	protected void hookOnComplete() {
		if (!this.told) {
			this.head.end();
			tell();
		}
		this.rest.tryEmitComplete();
	}

	@Override
	protected void hookOnError(Throwable error) {
		if (!this.told) {
			this.told = true;
			this.held.forEach(DataBufferUtils::release);
			this.decided.error(error);
			return;
		}
		this.rest.tryEmitError(error);
	}

	private void tell() {
		this.told = true;
		List<DataBuffer> head = List.copyOf(this.held);
		this.decided.success(Flux.concat(Flux.fromIterable(head), this.rest.asFlux()).doOnCancel(this::dispose));
	}

}
