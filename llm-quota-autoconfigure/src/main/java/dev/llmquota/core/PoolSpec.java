package dev.llmquota.core;

import java.time.Duration;
import java.util.Set;

/**
 * Immutable settings of one model's pool within a provider entry.
 *
 * @param model the model id calls name
 * @param aliases other model ids that share this pool
 * @param limits the model's own limits
 * @param accounting how output and cached input are charged
 * @param burstWindow the rate buckets' capacity in time: capacity = enforced rate x burst
 * window
 * @param expectedLatency whole-call latency assumed for the in-flight bounds until one is
 * observed
 * @param defaultMaxTokens output ceiling of a call that names none
 * @param priority the default admission class of this model's calls
 * @param tokenizer how input is estimated: {@code o200k_base}, {@code cl100k_base} or
 * {@code chars:N}
 * @param mode whether calls are governed, only reported on, or passed untouched
 */
public record PoolSpec(String model, Set<String> aliases, Limits limits, Accounting accounting, Duration burstWindow,
		Duration expectedLatency, long defaultMaxTokens, Priority priority, String tokenizer, Mode mode) {

	/**
	 * A governed pool's settings.
	 * @param model the model id
	 * @param aliases other ids sharing the pool
	 * @param limits the model's limits
	 * @param accounting how output and cached input are charged
	 * @param burstWindow the buckets' capacity in time
	 * @param expectedLatency latency assumed until one is observed
	 * @param defaultMaxTokens output ceiling of a call naming none
	 * @param priority the default class
	 * @param tokenizer how input is estimated
	 */
	public PoolSpec(String model, Set<String> aliases, Limits limits, Accounting accounting, Duration burstWindow,
			Duration expectedLatency, long defaultMaxTokens, Priority priority, String tokenizer) {
		this(model, aliases, limits, accounting, burstWindow, expectedLatency, defaultMaxTokens, priority, tokenizer,
				Mode.ENFORCE);
	}

	public PoolSpec {
		aliases = Set.copyOf(aliases);
		if (burstWindow.isNegative() || burstWindow.isZero()) {
			throw new IllegalArgumentException("burst window must be positive but was " + burstWindow);
		}
		if (expectedLatency.isNegative() || expectedLatency.isZero()) {
			throw new IllegalArgumentException("expected latency must be positive but was " + expectedLatency);
		}
		if (defaultMaxTokens < 0) {
			throw new IllegalArgumentException("default max tokens must not be negative but was " + defaultMaxTokens);
		}
	}

	/**
	 * Whether this model's calls spend a money budget: it has a price above 0.
	 * @return whether it is priced
	 */
	public boolean priced() {
		Cost cost = this.accounting.cost();
		return cost != null && !cost.free();
	}

	/**
	 * Returns this spec for another model id, as the pool of an unlisted model made from
	 * a template.
	 * @param model the model id
	 * @return the spec for that model, without aliases
	 */
	public PoolSpec forModel(String model) {
		return new PoolSpec(model, Set.of(), this.limits, this.accounting, this.burstWindow, this.expectedLatency,
				this.defaultMaxTokens, this.priority, this.tokenizer, this.mode);
	}

}
