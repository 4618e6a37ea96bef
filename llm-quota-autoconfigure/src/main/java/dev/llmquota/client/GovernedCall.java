package dev.llmquota.client;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.llmquota.core.Mode;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.core.QuotaPermit;
import dev.llmquota.core.ServerLimit;
import dev.llmquota.core.Usage;
import dev.llmquota.core.kernel.Arith;
import dev.llmquota.provider.Answer;
import dev.llmquota.provider.Framing;
import dev.llmquota.provider.HeaderLookup;
import dev.llmquota.provider.LogOnce;
import dev.llmquota.provider.ResponseReader;
import dev.llmquota.provider.UsageAccumulator;

/**
 * One admitted call on its way: reads the answer's headers into the books, its usage as
 * the body passes, and ends the call exactly once, whichever way it ends. The same for
 * every HTTP stack.
 */
public final class GovernedCall {

	private final QuotaEngine engine;

	private final CallPlan plan;

	private final QuotaPermit permit;

	private volatile ResponseReader reader;

	private final AtomicBoolean ended = new AtomicBoolean();

	/** A refusal's rate-limit reports, taken into the books after its tokens are back. */
	private volatile List<ServerLimit> refusalReports = List.of();

	private volatile int status;

	GovernedCall(QuotaEngine engine, CallPlan plan, QuotaPermit permit) {
		this.engine = engine;
		this.plan = plan;
		this.permit = permit;
		this.reader = new ResponseReader(plan.dialect(), plan.framing());
	}

	/**
	 * Returns the plan the call was admitted with.
	 * @return the plan
	 */
	public CallPlan plan() {
		return this.plan;
	}

	/**
	 * Returns the call's permit.
	 * @return the permit
	 */
	public QuotaPermit permit() {
		return this.permit;
	}

	/**
	 * The answer's status and headers arrived: the provider's rate-limit headers correct
	 * the books at once.
	 * @param status the HTTP status
	 * @param headers the headers
	 */
	public void onResponse(int status, HeaderLookup headers) {
		this.status = status;
		Framing framing = framing(headers.get("Content-Type"), this.plan.framing());
		if (framing != this.plan.framing()) {
			this.reader = new ResponseReader(this.plan.dialect(), framing);
		}
		this.reader.encoded(headers.get("Content-Encoding"));
		if (successful()) {
			this.plan.dialect().readHeaders(headers, this.reader.usage());
		}
		if (successful()) {
			// a call that succeeds ends any exhaustion: a probe found the quota back
			this.engine.succeeded(this.permit);
		}
		List<ServerLimit> reports = this.plan.dialect().rateLimits(headers, this.engine.clock().instant());
		if (this.status >= 400) {
			// a refusal's headers count nothing of the call they refused: they correct
			// the books once its reservation is back, not before (it would come back on
			// top of them)
			this.refusalReports = reports;
			return;
		}
		this.engine.observe(this.plan.pool(), reports);
	}

	/**
	 * Part of the body went by, unchanged.
	 * @param bytes the bytes; their position is not changed
	 */
	public void onBody(ByteBuffer bytes) {
		if (!this.ended.get()) {
			this.reader.feed(bytes);
		}
	}

	/**
	 * The caller read the whole body.
	 */
	public void onComplete() {
		if (!this.ended.compareAndSet(false, true)) {
			return;
		}
		try {
			this.reader.finish();
			if (!successful()) {
				refuseTokens();
				return;
			}
			UsageAccumulator usage = this.reader.usage();
			refusedMidStream(usage);
			if (this.plan.streaming() && !usage.streamEnded()) {
				// a stream that closed without the event that ends it (an error event
				// after the 200, a close before its last chunk): what went by, a count
				// in it too, is not final, and the reservation stands, as for one cut
				// short
				return;
			}
			Usage reported = usage.usage(this.plan.demand().inputTokens(), this.plan.generates());
			if (reported != null && reported.outputTokens() > believable(this.plan.demand().outputCeiling())) {
				LogOnce.warn("output beyond belief",
						"A " + this.plan.dialect().id().id() + " answer reported " + reported.outputTokens()
								+ " output tokens for a call whose ceiling was " + this.plan.demand().outputCeiling()
								+ "; llm-quota does not believe it and keeps the call's reservation");
				return;
			}
			if (reported != null) {
				if (usage.reportedInput() != null) {
					this.engine.recordDrift(this.plan.pool(), this.plan.rawEstimate(), usage.reportedInput());
				}
				this.permit.reconcile(reported);
			}
			else if (this.plan.streaming() && textStream() && !this.reader.partUnread()) {
				this.permit.reconcileEstimated(streamedSoFar(usage));
				if (this.plan.pool().spec().accounting().cost() != null
						&& this.plan.pool().account().limits().hasBudget()) {
					String entry = this.plan.entry().provider().id();
					LogOnce.warn("stream without usage " + entry,
							"Streams of provider '" + entry
									+ "' end without their usage, so each keeps its whole money reservation: set"
									+ " llm.quota.providers." + entry + ".add-stream-usage: true to have OpenAI-style"
									+ " streams report it");
				}
			}
			// An answer without usage keeps its reservation: never under-charged.
		}
		finally {
			if (successful()) {
				this.permit.complete(null);
			}
			else {
				this.permit.release();
			}
		}
	}

	/**
	 * The stream refused the call after a 200, before any of it reached the caller: the
	 * attempt ends as a refused one (its tokens back, its request kept where the provider
	 * counts refused requests).
	 */
	public void onRefusedInStream() {
		if (!this.ended.compareAndSet(false, true)) {
			return;
		}
		try {
			refuseTokens();
		}
		finally {
			this.permit.release();
		}
	}

	/**
	 * The body ended early: an error, a dropped connection, or the caller cancelled. The
	 * provider may have generated more than went by before it noticed, and a count seen
	 * so far (Gemini sends one in every chunk) is not the final one: the reservation
	 * stands, never refunded on what was not seen. A stream that had sent the event that
	 * ends it was answered in full (OpenAI's SDK closes it on {@code [DONE]}): it ends as
	 * one read to its last byte, as does a refusal (status 400 and above).
	 */
	public void onAbort() {
		if (this.reader.usage().streamEnded() || this.status >= 400) {
			// a refusal's status says the provider generated nothing, however its body
			// ended
			onComplete();
			return;
		}
		if (!this.ended.compareAndSet(false, true)) {
			return;
		}
		try {
			this.reader.finish();
			refusedMidStream(this.reader.usage());
		}
		finally {
			this.permit.release();
		}
	}

	/**
	 * The caller cancelled the call: before its answer came, it ends as one without
	 * answer; after, as its body ended early (a stream it cancelled on its last event was
	 * answered in full). A reactive caller's cancel of the body reaches here too, before
	 * the body's own.
	 */
	public void onCancel() {
		if (this.status == 0) {
			onNoResponse();
		}
		else {
			onAbort();
		}
	}

	/**
	 * The call was not sent (its caller cancelled it once admitted): everything it booked
	 * goes back, since the provider never saw it.
	 */
	public void onNotSent() {
		if (this.ended.compareAndSet(false, true)) {
			this.permit.cancel();
		}
	}

	/**
	 * No answer arrived (connection refused, timeout, cancelled while sending): the slots
	 * go back and the reservation stands, since the provider may have seen the call.
	 */
	public void onNoResponse() {
		if (this.ended.compareAndSet(false, true)) {
			this.permit.release();
		}
	}

	/**
	 * The answer's content type says how it is framed; the request's shape is the
	 * fallback.
	 */
	static Framing framing(String contentType, Framing planned) {
		if (contentType == null) {
			return planned;
		}
		String type = contentType.toLowerCase(Locale.ROOT);
		if (type.startsWith("text/event-stream")) {
			return Framing.SSE;
		}
		if (type.startsWith("application/x-ndjson") || type.startsWith("application/jsonl")) {
			return Framing.NDJSON;
		}
		if (type.startsWith("application/json")) {
			return Framing.JSON;
		}
		if (type.startsWith("application/vnd.amazon.eventstream")) {
			return Framing.EVENT_STREAM;
		}
		return planned;
	}

	private boolean successful() {
		return this.status >= 200 && this.status < 300;
	}

	/**
	 * A refused or failed attempt generated no tokens; it keeps its request charged where
	 * the provider counts refused requests ({@code charge-refused}).
	 */
	private void refuseTokens() {
		this.permit.refuse(this.plan.entry().provider().chargeRefusedRequests());
		this.engine.observe(this.plan.pool(), this.refusalReports);
	}

	/**
	 * A stream that the provider ended as a refusal after some of it reached the caller:
	 * the stream ends as the provider ended it (the call is charged what it used), and
	 * the refusal goes into the books, a rate limit holding the pool for the provider's
	 * wait.
	 */
	private void refusedMidStream(UsageAccumulator usage) {
		if (usage.refusal() == null || this.plan.pool().spec().mode() == Mode.OFF) {
			return;
		}
		Answer refusal = this.plan.dialect().refusal(usage.refusal(), this.engine.clock().instant());
		if (refusal == null) {
			return;
		}
		if (refusal.kind() == Answer.Kind.RATE_LIMITED) {
			this.engine.rateLimited(this.plan.pool(), refusal.dimension(),
					(refusal.delay() != null) ? refusal.delay() : Duration.ofSeconds(1));
		}
		else if (refusal.kind() == Answer.Kind.EXHAUSTED) {
			this.engine.exhaust(this.plan.pool(), refusal.wholeAccount(), refusal.dimension(), refusal.reason(),
					refusal.reset(this.engine.clock().instant()));
		}
	}

	/**
	 * Whether the answer streams text whose length estimates its output: lines of events,
	 * not AWS's binary event stream nor a JSON answer to a call that asked for a stream,
	 * whose reservation stands when they end without usage (never refund what was not
	 * seen).
	 */
	private boolean textStream() {
		return this.reader.framing() == Framing.SSE || this.reader.framing() == Framing.NDJSON;
	}

	/**
	 * The most output a call of this ceiling is believed to have generated: reasoning and
	 * thoughts may go past a declared ceiling (Gemini's thinking budget is apart from its
	 * maxOutputTokens), and a ceiling llm-quota assumed may be short, but a count far
	 * past it is a provider's, or a proxy's, mistake. Believed, it would put the pool in
	 * a debt its refill takes weeks to repay.
	 */
	private static long believable(long ceiling) {
		return Math.max(Arith.mulDiv(ceiling, 10, 1), Arith.saturatedAdd(ceiling, 200_000));
	}

	/**
	 * A stream that ended without usage: its input, and what was streamed so far, which
	 * no estimate puts beyond the call's output ceiling.
	 */
	private Usage streamedSoFar(UsageAccumulator usage) {
		long input = (usage.reportedInput() != null) ? usage.reportedInput() : this.plan.demand().inputTokens();
		long output = this.plan.estimator().outputTokens(usage.outputChars());
		long ceiling = this.plan.demand().outputCeiling();
		return new Usage(input, 0, (ceiling > 0) ? Math.min(output, ceiling) : output);
	}

}
