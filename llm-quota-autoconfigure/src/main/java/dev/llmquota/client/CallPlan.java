package dev.llmquota.client;

import java.time.Duration;

import dev.llmquota.core.Demand;
import dev.llmquota.core.Pool;
import dev.llmquota.core.Priority;
import dev.llmquota.provider.Framing;
import dev.llmquota.tokens.TokenEstimator;

/**
 * What llm-quota read from one call before sending it.
 *
 * @param entry the provider entry and dialect
 * @param pool the pool the call is accounted to
 * @param demand what it reserves: corrected input estimate and output ceiling
 * @param rawEstimate the input estimate before drift correction, compared with usage
 * @param estimator the pool's input estimator
 * @param generates whether the endpoint generates output (not embeddings or moderations):
 * a call that does not reserves no output
 * @param streaming whether the answer is streamed
 * @param refusesInStream whether the stream may refuse the call after a 200 (OpenAI's
 * Responses API): it is held back from the caller until its first telling event
 * @param framing how the answer is framed
 * @param body the bytes to send: the caller's, unless a usage request was added
 * @param priority the call's class, or {@code null} for the model's default
 * @param maxWait the call's longest wait, or {@code null} for the configured one
 */
public record CallPlan(ProviderEntry entry, Pool pool, Demand demand, long rawEstimate, TokenEstimator estimator,
		boolean generates, boolean streaming, boolean refusesInStream, Framing framing, byte[] body, Priority priority,
		Duration maxWait) {

}
