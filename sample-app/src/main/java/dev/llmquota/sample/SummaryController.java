package dev.llmquota.sample;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.llmquota.core.Priority;
import reactor.core.publisher.Mono;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The service's API: a summary for someone waiting ({@code INTERACTIVE}), and the batch's
 * progress for the dashboard.
 */
@RestController
class SummaryController {

	private final Summarizer summarizer;

	private final BatchJob job;

	SummaryController(Summarizer summarizer, BatchJob job) {
		this.summarizer = summarizer;
		this.job = job;
	}

	/**
	 * Summarises {@code {"text": "..."}} into {@code {"summary": "..."}}.
	 * @param document the document
	 * @return its summary
	 */
	@PostMapping("/summaries")
	Mono<Map<String, String>> summarise(@RequestBody Map<String, String> document) {
		return this.summarizer.summarize(document.getOrDefault("text", ""), Priority.INTERACTIVE, true)
			.map((summary) -> Map.of("summary", summary.text()));
	}

	/**
	 * Returns the batch's progress.
	 * @return done, failed, documents, refusals and seconds
	 */
	@GetMapping("/demo/status")
	Map<String, Object> status() {
		Map<String, Object> status = new LinkedHashMap<>();
		BatchJob.Progress progress = this.job.progress();
		if (progress != null) {
			status.put("governed", progress.governed());
			status.put("running", progress.running());
			status.put("documents", progress.documents());
			status.put("done", progress.done().get());
			status.put("failed", progress.failed().get());
			status.put("refusals", this.job.refusalsSince(progress));
			status.put("seconds", progress.elapsed().toSeconds());
		}
		return status;
	}

}
