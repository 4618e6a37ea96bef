package dev.llmquota.actuate;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.List;

import dev.llmquota.client.Route;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.QuotaEngine;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * {@code /actuator/llmquota}: every bucket's limit, remaining and reset, which one binds,
 * and the pool's state. Its write operation (reset an exhausted pool, change a limit at
 * run time) is off unless access to the endpoint is set to unrestricted.
 */
@Endpoint(id = "llmquota", defaultAccess = Access.READ_ONLY)
public class LlmQuotaEndpoint {

	private final QuotaEngine engine;

	private final QuotaReports reports;

	/**
	 * Creates the endpoint.
	 * @param engine the engine
	 */
	public LlmQuotaEndpoint(QuotaEngine engine) {
		this(engine, List.of());
	}

	/**
	 * Creates the endpoint, showing routes too.
	 * @param engine the engine
	 * @param routes the routes
	 */
	public LlmQuotaEndpoint(QuotaEngine engine, List<Route> routes) {
		this.engine = engine;
		this.reports = new QuotaReports(engine, routes);
	}

	/**
	 * Returns every pool and account.
	 * @return the report
	 */
	@ReadOperation
	public QuotaReport quotas() {
		return this.reports.report(null);
	}

	/**
	 * Returns one provider entry's pools and account.
	 * @param provider the provider entry's id
	 * @return the report, or {@code null} (404) if there is no such entry
	 */
	@ReadOperation
	public @Nullable QuotaReport provider(@Selector String provider) {
		if (!this.engine.config().providers().containsKey(provider)) {
			return null;
		}
		return this.reports.report(provider);
	}

	/**
	 * Resets an exhausted pool (or the whole entry), or changes a limit at run time.
	 * @param provider the provider entry's id
	 * @param model the model; none means the entry's account
	 * @param reset {@code true} to lift an exhaustion
	 * @param dimension the dimension whose limit changes, for example
	 * {@code tokens-per-minute}
	 * @param limit the new published limit: a whole number of calls or tokens, or a money
	 * budget in the account's currency (as the report shows it, {@code 62.50})
	 * @return the provider's report after the change, or {@code null} (404) if there is
	 * no such entry
	 * @throws InvalidEndpointRequestException (400) for a dimension or limit that cannot
	 * be set
	 */
	@WriteOperation
	public @Nullable QuotaReport update(@Selector String provider, @Nullable String model, @Nullable Boolean reset,
			@Nullable String dimension, @Nullable BigDecimal limit) {
		if (!this.engine.config().providers().containsKey(provider)) {
			return null;
		}
		if ((dimension == null) != (limit == null)) {
			throw invalid("A limit changes with both 'dimension' and 'limit'; this request gave only "
					+ ((dimension != null) ? "'dimension'" : "'limit'"));
		}
		try {
			if (Boolean.TRUE.equals(reset) && model != null) {
				// a reset that would lift nothing changes nothing it came with either
				this.engine.checkReset(provider, model);
			}
			// the change first: one the engine refuses resets nothing it came with
			if (dimension != null && limit != null) {
				Dimension changed = dimension(dimension);
				this.engine.changeLimit(provider, model, changed, units(changed, model, limit));
			}
			if (Boolean.TRUE.equals(reset)) {
				this.engine.resetExhausted(provider, model);
			}
		}
		catch (IllegalArgumentException ex) {
			// a model with no pool, a limit it cannot take: the request's mistake
			throw invalid(ex.getMessage());
		}
		return this.reports.report(provider);
	}

	private static Dimension dimension(String id) {
		try {
			return Dimension.fromId(id);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), "Unknown dimension '" + id + "'");
		}
	}

	/** A limit in the books' units: a budget's in millionths of its currency. */
	private static long units(Dimension dimension, @Nullable String model, BigDecimal limit) {
		if (limit.signum() <= 0) {
			throw invalid(dimension.id() + " must be positive, not " + limit.toPlainString());
		}
		if (dimension.countsMoney()) {
			if (model != null) {
				throw invalid(dimension.id() + " is the entry's account's, not a model's: leave out model");
			}
			return micros(dimension, limit);
		}
		if (limit.stripTrailingZeros().scale() > 0) {
			throw invalid(dimension.id() + " takes a whole number, not " + limit.toPlainString());
		}
		try {
			return limit.longValueExact();
		}
		catch (ArithmeticException ex) {
			throw invalid(dimension.id() + " is too large: " + limit.toPlainString());
		}
	}

	private static long micros(Dimension dimension, BigDecimal limit) {
		try {
			long micros = limit.movePointRight(6).setScale(0, RoundingMode.HALF_UP).longValueExact();
			if (micros < 1) {
				throw invalid(dimension.id() + " of " + limit.toPlainString()
						+ " rounds to nothing: budgets count millionths of the currency");
			}
			return micros;
		}
		catch (ArithmeticException ex) {
			throw invalid(dimension.id() + " is too large: " + limit.toPlainString());
		}
	}

	private static InvalidEndpointRequestException invalid(String message) {
		return new InvalidEndpointRequestException(message, message);
	}

}
