package dev.llmquota.sample;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.llmquota.core.Priority;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.stereotype.Component;

/**
 * Summarises the bundled corpus as a batch: every document at {@code BATCH} priority,
 * with many more workers than the quota admits.
 */
@Component
public class BatchJob {

	private static final Log logger = LogFactory.getLog(BatchJob.class);

	private final Corpus corpus;

	private final Summarizer summarizer;

	private final DemoProperties properties;

	private volatile Progress progress;

	/**
	 * How a batch is doing.
	 *
	 * @param governed whether llm-quota admits its calls
	 * @param documents documents in the batch
	 * @param done documents summarised
	 * @param failed documents that failed
	 * @param startedNanos when it started
	 * @param endedNanos when it ended, or 0 while it runs
	 * @param refusalsAtStart the service's rate-limit answers before it started
	 */
	public record Progress(boolean governed, int documents, AtomicInteger done, AtomicInteger failed, long startedNanos,
			long endedNanos, long refusalsAtStart) {

		boolean running() {
			return this.endedNanos == 0;
		}

		Duration elapsed() {
			return Duration.ofNanos(((this.endedNanos != 0) ? this.endedNanos : System.nanoTime()) - this.startedNanos);
		}

	}

	/**
	 * What a batch achieved.
	 *
	 * @param governed whether llm-quota admitted its calls
	 * @param documents documents in the batch
	 * @param done documents summarised
	 * @param failed documents that failed
	 * @param refusals rate-limit answers the provider gave during the batch
	 * @param elapsed how long it took
	 * @param tokensDone the tokens the provider billed for the documents summarised (the
	 * usage of their answers: input and output)
	 */
	public record Result(boolean governed, int documents, int done, int failed, long refusals, Duration elapsed,
			long tokensDone) {

		/**
		 * Returns the tokens the provider billed per minute for documents summarised: the
		 * goodput, fair to small and large documents alike.
		 * @return tokens per minute
		 */
		public double goodputPerMinute() {
			return this.tokensDone * 60_000.0 / Math.max(1, this.elapsed.toMillis());
		}

	}

	public BatchJob(Corpus corpus, Summarizer summarizer, DemoProperties properties) {
		this.corpus = corpus;
		this.summarizer = summarizer;
		this.properties = properties;
	}

	/**
	 * Runs the batch and waits for it.
	 * @param governed whether llm-quota admits the calls
	 * @return what it achieved
	 */
	public Result run(boolean governed) {
		List<Corpus.Document> documents = new ArrayList<>();
		List<Corpus.Document> corpus = this.corpus.documents();
		if (this.properties.getDocuments() > 0) {
			corpus = corpus.subList(0, Math.min(corpus.size(), this.properties.getDocuments()));
		}
		for (int round = 0; round < this.properties.getRounds(); round++) {
			documents.addAll(corpus);
		}
		Progress started = new Progress(governed, documents.size(), new AtomicInteger(), new AtomicInteger(),
				System.nanoTime(), 0, this.summarizer.refusals());
		AtomicLong tokensDone = new AtomicLong();
		this.progress = started;
		Flux.fromIterable(documents)
			.flatMap((document) -> this.summarizer.summarize(document.text(), Priority.BATCH, governed)
				.doOnNext((summary) -> {
					started.done().incrementAndGet();
					tokensDone.addAndGet(summary.billedTokens());
				})
				.onErrorResume((ex) -> {
					if (started.failed().incrementAndGet() == 1) {
						logger.warn("A document of the batch failed (later failures are only counted): " + ex);
					}
					return Mono.empty();
				}), this.properties.getWorkers())
			.blockLast();
		Progress ended = new Progress(governed, started.documents(), started.done(), started.failed(),
				started.startedNanos(), System.nanoTime(), started.refusalsAtStart());
		this.progress = ended;
		return new Result(governed, ended.documents(), ended.done().get(), ended.failed().get(),
				this.summarizer.refusals() - ended.refusalsAtStart(), ended.elapsed(), tokensDone.get());
	}

	/**
	 * Returns the progress of the batch running or run last.
	 * @return the progress, or {@code null} before the first batch
	 */
	public Progress progress() {
		return this.progress;
	}

	/**
	 * Returns the service's rate-limit answers since the batch started.
	 * @param progress a batch's progress
	 * @return the refusals
	 */
	public long refusalsSince(Progress progress) {
		return this.summarizer.refusals() - progress.refusalsAtStart();
	}

}
