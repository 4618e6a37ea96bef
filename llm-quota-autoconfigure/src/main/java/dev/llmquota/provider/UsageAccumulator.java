package dev.llmquota.provider;

import dev.llmquota.core.Usage;
import tools.jackson.databind.JsonNode;

/**
 * What a response said about usage so far: counts as the provider reported them (each may
 * still be unknown), and how much output text went by, for a stream that ends without
 * usage.
 */
public final class UsageAccumulator {

	/**
	 * A reported count above this is one no call reaches (a hundred times the largest
	 * context window served today): a provider, or a proxy before it, that reports one is
	 * not believed, and the call keeps its reservation.
	 */
	static final long MOST_TOKENS = 1_000_000_000L;

	private Long inputTokens;

	private Long cachedInputTokens;

	private Long cacheWriteInputTokens;

	private Long outputTokens;

	private long outputChars;

	/** An event that ended the stream as a refusal, or {@code null}. */
	private JsonNode refusal;

	/** Whether the stream sent the event that ends it. */
	private boolean ended;

	/** Whether a count no call reaches was reported. */
	private boolean implausible;

	/** Sets the input tokens, cached ones included, when reported. */
	void input(Long total, Long cached) {
		input(total, cached, null);
	}

	/**
	 * Sets the input tokens, cached ones and those written to the cache included, when
	 * reported.
	 */
	private void input(Long total, Long cached, Long written) {
		if (plausible(total)) {
			this.inputTokens = total;
		}
		if (plausible(cached)) {
			this.cachedInputTokens = cached;
		}
		if (plausible(written)) {
			this.cacheWriteInputTokens = written;
		}
	}

	/**
	 * Takes cumulative input counts reported in parts (uncached, read from the cache,
	 * written to it), as Anthropic's stream does: a part an event leaves out keeps what
	 * an earlier event said, and a part never goes below it (a count that only grows; a
	 * proxy's zeros do not wipe out what the stream's start reported).
	 * @param uncached the uncached input, or {@code null}
	 * @param read the input read from the cache, or {@code null}
	 * @param written the input written to the cache, or {@code null}
	 */
	void inputParts(Long uncached, Long read, Long written) {
		// every part checked (an implausible one is flagged), then none reported: nothing
		// new
		if (!(plausible(uncached) | plausible(read) | plausible(written))) {
			return;
		}
		Long earlierUncached = (this.inputTokens != null)
				? Math.max(0, this.inputTokens - zero(this.cachedInputTokens) - zero(this.cacheWriteInputTokens))
				: null;
		Long allUncached = Json.max(earlierUncached, believed(uncached));
		Long allRead = Json.max(this.cachedInputTokens, believed(read));
		Long allWritten = Json.max(this.cacheWriteInputTokens, believed(written));
		input(Json.sum(allUncached, allWritten, allRead), allRead, allWritten);
	}

	private static long zero(Long count) {
		return (count != null) ? count : 0;
	}

	private static Long believed(Long count) {
		return (count != null && count <= MOST_TOKENS) ? count : null;
	}

	/**
	 * Sets the output tokens when reported (a cumulative count replaces the last one).
	 */
	void output(Long tokens) {
		if (plausible(tokens)) {
			this.outputTokens = tokens;
		}
	}

	/**
	 * Returns a usage count: a whole number of at least 0, or {@code null} when the field
	 * is absent or null. A count in another form (negative, a fraction, a string) is not
	 * believed, as one no call reaches is not: the call keeps its reservation rather than
	 * being taken for an answer without usage.
	 * @param node the object the count is in
	 * @param path the count's path in it
	 * @return the count, or {@code null}
	 */
	Long count(JsonNode node, String... path) {
		JsonNode value = Json.at(node, path);
		if (value == null || value.isNull() || value.isMissingNode()) {
			return null;
		}
		Long count = Json.count(value);
		if (count == null) {
			this.implausible = true;
			String shown = value.toString();
			LogOnce.warn("unreadable usage",
					"llm-quota read a usage count it cannot use (" + String.join(".", path) + ": "
							+ ((shown.length() > 40) ? shown.substring(0, 40) + "..." : shown)
							+ "); it keeps the call's reservation");
		}
		return count;
	}

	private boolean plausible(Long count) {
		if (count == null) {
			return false;
		}
		if (count <= MOST_TOKENS) {
			return true;
		}
		this.implausible = true;
		LogOnce.warn("implausible usage", "llm-quota read a usage count of " + count
				+ " tokens, more than any call uses; it keeps the call's reservation");
		return false;
	}

	/**
	 * Returns whether the answer reported a count no call reaches: none of its counts is
	 * then believed, and the call keeps its reservation.
	 * @return whether a count was implausible
	 */
	public boolean implausible() {
		return this.implausible;
	}

	void refusal(JsonNode event) {
		this.refusal = event;
	}

	/**
	 * Returns the event that ended the stream as a refusal (a Responses stream's
	 * {@code response.failed}), for the dialect to classify.
	 * @return the event, or {@code null}
	 */
	public JsonNode refusal() {
		return this.refusal;
	}

	/**
	 * The stream sent the event that ends it (OpenAI's {@code [DONE]}, Anthropic's
	 * {@code message_stop}): nothing is generated or reported after it.
	 */
	void end() {
		this.ended = true;
	}

	/**
	 * Returns whether the stream sent the event that ends it: its usage is then final
	 * even when its reader stops there, before the connection's end (as OpenAI's SDK
	 * does).
	 * @return whether the stream said it ended
	 */
	public boolean streamEnded() {
		return this.ended;
	}

	void outputText(String text) {
		if (text != null) {
			this.outputChars += text.length();
		}
	}

	/**
	 * Returns whether the provider reported how many tokens were generated.
	 * @return whether output usage is known
	 */
	public boolean hasUsage() {
		return this.outputTokens != null && !this.implausible;
	}

	/**
	 * Returns the usage the provider reported, filling unknown input with the estimate.
	 * @param inputEstimate the input estimate, used when the provider did not report
	 * input
	 * @return the usage, or {@code null} if the provider reported no output count
	 */
	public Usage usage(long inputEstimate) {
		return usage(inputEstimate, true);
	}

	/**
	 * Returns the usage the provider reported. A call that generates nothing (embeddings)
	 * used no output, so its input count alone is its usage.
	 * @param inputEstimate the input estimate, used when the provider did not report
	 * input of a call that generates
	 * @param generates whether the call's endpoint generates output
	 * @return the usage, or {@code null} if the provider reported no output count (for a
	 * call that generates), no input count (for one that does not), or a count no call
	 * reaches
	 */
	public Usage usage(long inputEstimate, boolean generates) {
		if (this.implausible) {
			return null;
		}
		if (!generates) {
			if (this.inputTokens == null) {
				return null;
			}
			long cached = (this.cachedInputTokens != null) ? this.cachedInputTokens : 0;
			return new Usage(this.inputTokens, Math.min(cached, this.inputTokens), 0);
		}
		if (this.outputTokens == null) {
			return null;
		}
		long input = (this.inputTokens != null) ? this.inputTokens : inputEstimate;
		long cached = (this.cachedInputTokens != null) ? this.cachedInputTokens : 0;
		long written = (this.cacheWriteInputTokens != null) ? this.cacheWriteInputTokens : 0;
		return new Usage(input, Math.min(cached, input), this.outputTokens, written);
	}

	/**
	 * Returns the input tokens the provider reported.
	 * @return the input tokens, or {@code null}
	 */
	public Long reportedInput() {
		return this.implausible ? null : this.inputTokens;
	}

	/**
	 * Returns the characters of output text seen in a stream.
	 * @return the characters
	 */
	public long outputChars() {
		return this.outputChars;
	}

}
