package dev.llmquota.test.simulator.quota;

import java.util.Map;

/**
 * The outcome of one admission and the bookkeeping of the call it admitted.
 */
public final class Admission {

	private final long generation;

	private final String model;

	private final Refusal violation;

	private final boolean enforced;

	private final Map<Dimension, DimensionState> states;

	private final long maxTokens;

	private final long reservedOutput;

	private final long requestedTokens;

	private final boolean refundUnused;

	private final int burndown;

	long chargedOutput;

	boolean settled;

	boolean released;

	Admission(long generation, String model, Refusal violation, boolean enforced, Map<Dimension, DimensionState> states,
			long maxTokens, long reservedOutput, long requestedTokens, boolean refundUnused, int burndown) {
		this.generation = generation;
		this.model = model;
		this.violation = violation;
		this.enforced = enforced;
		this.states = states;
		this.maxTokens = maxTokens;
		this.reservedOutput = reservedOutput;
		this.requestedTokens = requestedTokens;
		this.refundUnused = refundUnused;
		this.burndown = burndown;
		this.chargedOutput = reservedOutput;
	}

	/**
	 * Whether the call was admitted (and must later be settled and released).
	 * @return true if admitted
	 */
	public boolean admitted() {
		return this.violation == null || !this.enforced;
	}

	/**
	 * The limit the call exceeded, or {@code null}; with enforcement off the call was let
	 * through anyway.
	 * @return the violation
	 */
	public Refusal violation() {
		return this.violation;
	}

	/**
	 * Whether the call exceeded a limit, refused or (with enforcement off) let through.
	 * @return true if over a limit
	 */
	public boolean overLimit() {
		return this.violation != null;
	}

	/**
	 * The tightest state per dimension right after this admission, for response headers.
	 * @return states by dimension
	 */
	public Map<Dimension, DimensionState> states() {
		return this.states;
	}

	public String model() {
		return this.model;
	}

	/**
	 * The output ceiling of the call: declared, or the model's default.
	 * @return max tokens
	 */
	public long maxTokens() {
		return this.maxTokens;
	}

	/**
	 * Input estimate plus the output reserved at admission: what token meters were asked
	 * for.
	 * @return requested tokens
	 */
	public long requestedTokens() {
		return this.requestedTokens;
	}

	long generation() {
		return this.generation;
	}

	long reservedOutput() {
		return this.reservedOutput;
	}

	boolean refundUnused() {
		return this.refundUnused;
	}

	int burndown() {
		return this.burndown;
	}

}
