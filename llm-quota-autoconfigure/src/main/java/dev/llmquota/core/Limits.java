package dev.llmquota.core;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;

/**
 * Published limits per dimension for one scope (a model's pool or an account); a
 * dimension that is absent is not limited in that scope.
 */
public final class Limits {

	private static final Limits NONE = new Limits(new EnumMap<>(Dimension.class));

	private final Map<Dimension, Long> values;

	private Limits(EnumMap<Dimension, Long> values) {
		this.values = Collections.unmodifiableMap(values);
	}

	/**
	 * Returns limits with no dimension limited.
	 * @return empty limits
	 */
	public static Limits none() {
		return NONE;
	}

	/**
	 * Returns the given limits.
	 * @param values positive limits per dimension
	 * @return the limits
	 * @throws IllegalArgumentException if a limit is not positive
	 */
	public static Limits of(Map<Dimension, Long> values) {
		EnumMap<Dimension, Long> copy = new EnumMap<>(Dimension.class);
		values.forEach((dimension, limit) -> {
			if (limit == null || limit < 1) {
				throw new IllegalArgumentException("Limit of " + dimension.id() + " must be positive but was " + limit);
			}
			copy.put(dimension, limit);
		});
		return new Limits(copy);
	}

	/**
	 * Returns these limits with one dimension set, for a limit learned or changed at run
	 * time.
	 * @param dimension the dimension
	 * @param limit its new positive limit
	 * @return new limits
	 */
	public Limits with(Dimension dimension, long limit) {
		EnumMap<Dimension, Long> copy = new EnumMap<>(Dimension.class);
		copy.putAll(this.values);
		copy.put(dimension, limit);
		return of(copy);
	}

	/**
	 * Returns the limits as an unmodifiable map.
	 * @return limits per dimension
	 */
	public Map<Dimension, Long> asMap() {
		return this.values;
	}

	/**
	 * Returns whether no dimension is limited.
	 * @return whether empty
	 */
	public boolean isEmpty() {
		return this.values.isEmpty();
	}

	/**
	 * Returns whether a money budget is among these limits.
	 * @return whether one is
	 */
	public boolean hasBudget() {
		return this.values.keySet().stream().anyMatch(Dimension::countsMoney);
	}

	@Override
	public boolean equals(Object other) {
		return (other instanceof Limits limits) && limits.values.equals(this.values);
	}

	@Override
	public int hashCode() {
		return this.values.hashCode();
	}

	@Override
	public String toString() {
		return this.values.toString();
	}

}
