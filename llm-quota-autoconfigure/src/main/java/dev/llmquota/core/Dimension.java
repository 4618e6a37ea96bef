package dev.llmquota.core;

import java.util.Locale;

import dev.llmquota.core.kernel.Arith;

/**
 * One metered quantity a provider limits; the names are those of the public contract.
 */
public enum Dimension {

	/** Calls started per minute; a call takes 1. */
	REQUESTS_PER_MINUTE(Kind.RATE, false),

	/** Combined input and output tokens per minute. */
	TOKENS_PER_MINUTE(Kind.RATE, true),

	/** Input tokens per minute. */
	INPUT_TOKENS_PER_MINUTE(Kind.RATE, true),

	/** Output tokens per minute. */
	OUTPUT_TOKENS_PER_MINUTE(Kind.RATE, true),

	/** Calls in flight at once; held until the call ends. */
	CONCURRENT_REQUESTS(Kind.CONCURRENCY, false),

	/** Calls per calendar day. */
	REQUESTS_PER_DAY(Kind.DAILY, false),

	/** Combined tokens per calendar day. */
	TOKENS_PER_DAY(Kind.DAILY, true),

	/**
	 * Money per calendar day, in millionths of the account's currency; from the models'
	 * {@code cost}.
	 */
	BUDGET_PER_DAY(Kind.DAILY, false),

	/**
	 * Money per calendar month, in millionths of the account's currency; from the models'
	 * {@code cost}.
	 */
	BUDGET_PER_MONTH(Kind.DAILY, false);

	/**
	 * How a dimension meters its units.
	 */
	public enum Kind {

		/** A token bucket refilled continuously at the enforced rate per minute. */
		RATE,

		/** A count of calls in flight. */
		CONCURRENCY,

		/**
		 * A counter reset at the start of each calendar day (each month for
		 * {@code budget-per-month}).
		 */
		DAILY

	}

	private final Kind kind;

	private final boolean tokens;

	private final String id;

	Dimension(Kind kind, boolean tokens) {
		this.kind = kind;
		this.tokens = tokens;
		this.id = name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

	/**
	 * Returns the contract name, for example {@code tokens-per-minute}.
	 * @return the dimension's id
	 */
	public String id() {
		return this.id;
	}

	/**
	 * Returns how this dimension meters.
	 * @return the kind
	 */
	public Kind kind() {
		return this.kind;
	}

	/**
	 * Returns whether this dimension counts tokens rather than calls.
	 * @return whether units are tokens
	 */
	public boolean countsTokens() {
		return this.tokens;
	}

	/**
	 * Returns the units a call takes from this dimension at admission.
	 * @param demand the call's estimate and output ceiling
	 * @param accounting how the provider entry charges output
	 * @return the units to reserve
	 */
	public long unitsAtAdmission(Demand demand, Accounting accounting) {
		long output = accounting.reserveMaxTokens() ? accounting.burnedOutput(demand.outputCeiling()) : 0;
		return switch (this) {
			case REQUESTS_PER_MINUTE, REQUESTS_PER_DAY, CONCURRENT_REQUESTS -> 1;
			case INPUT_TOKENS_PER_MINUTE -> demand.inputTokens();
			case OUTPUT_TOKENS_PER_MINUTE -> output;
			case TOKENS_PER_MINUTE, TOKENS_PER_DAY -> Arith.saturatedAdd(demand.inputTokens(), output);
			case BUDGET_PER_DAY, BUDGET_PER_MONTH ->
				(accounting.cost() != null) ? accounting.cost().microsAtAdmission(demand) : 0;
		};
	}

	/**
	 * Returns the units a call is expected to take from this dimension, for which
	 * dimension binds and for the in-flight bounds: what it takes at admission, except
	 * that output charged only as it is generated counts as expected.
	 * @param demand the call's estimate and output ceiling
	 * @param accounting how the provider entry charges output
	 * @param expectedOutput the output the call is expected to generate, in units
	 * (burndown applied)
	 * @return the units expected
	 */
	public long unitsExpected(Demand demand, Accounting accounting, long expectedOutput) {
		if (accounting.reserveMaxTokens() || !countsOutput()) {
			return unitsAtAdmission(demand, accounting);
		}
		return (this == OUTPUT_TOKENS_PER_MINUTE) ? expectedOutput
				: Arith.saturatedAdd(unitsAtAdmission(demand, accounting), expectedOutput);
	}

	/**
	 * Returns whether this dimension counts money rather than calls or tokens.
	 * @return whether units are millionths of the account's currency
	 */
	public boolean countsMoney() {
		return this == BUDGET_PER_DAY || this == BUDGET_PER_MONTH;
	}

	/**
	 * Returns the first day of the calendar period a day belongs to: the day itself, or
	 * the first of its month for a monthly dimension.
	 * @param day a calendar day
	 * @return the start of its period
	 */
	public java.time.LocalDate periodStart(java.time.LocalDate day) {
		return (this == BUDGET_PER_MONTH) ? day.withDayOfMonth(1) : day;
	}

	/**
	 * Returns the first day of the next period.
	 * @param periodStart the start of a period
	 * @return the start of the next
	 */
	public java.time.LocalDate nextPeriod(java.time.LocalDate periodStart) {
		return (this == BUDGET_PER_MONTH) ? periodStart.plusMonths(1) : periodStart.plusDays(1);
	}

	/**
	 * Returns whether this dimension counts input tokens.
	 * @return whether input tokens are charged here
	 */
	public boolean countsInput() {
		return this == INPUT_TOKENS_PER_MINUTE || this == TOKENS_PER_MINUTE || this == TOKENS_PER_DAY;
	}

	/**
	 * Returns whether this dimension counts output tokens.
	 * @return whether output tokens are charged here
	 */
	public boolean countsOutput() {
		return this == OUTPUT_TOKENS_PER_MINUTE || this == TOKENS_PER_MINUTE || this == TOKENS_PER_DAY;
	}

	/**
	 * Finds the dimension with the given contract name.
	 * @param id the contract name, for example {@code requests-per-day}
	 * @return the dimension
	 * @throws IllegalArgumentException if no dimension has that name
	 */
	public static Dimension fromId(String id) {
		for (Dimension dimension : values()) {
			if (dimension.id.equals(id)) {
				return dimension;
			}
		}
		throw new IllegalArgumentException("Unknown dimension '" + id + "'");
	}

}
