package dev.llmquota.test.simulator.quota;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.Collection;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The meters of one scope: a model or the account.
 */
final class Pool {

	private final String scope;

	private final Limits limits;

	private final Map<Dimension, Meter> meters = new EnumMap<>(Dimension.class);

	Pool(String scope, Limits limits, Duration window, ZoneId dayZone, Supplier<Instant> wall, long nowNanos) {
		this.scope = scope;
		this.limits = limits;
		limits.values().forEach((dimension, limit) -> this.meters.put(dimension, switch (dimension) {
			case CONCURRENT_REQUESTS -> new ConcurrencyGate(limit);
			case REQUESTS_PER_DAY, TOKENS_PER_DAY -> new DayCounter(dimension, limit, dayZone, wall);
			default -> new RateBucket(dimension, limit, window, nowNanos);
		}));
	}

	String scope() {
		return this.scope;
	}

	Limits limits() {
		return this.limits;
	}

	Collection<Meter> meters() {
		return this.meters.values();
	}

	Meter meter(Dimension dimension) {
		return this.meters.get(dimension);
	}

	/**
	 * Lowers the refill of this scope's per-minute buckets by a team's steady spending.
	 */
	void drain(BackgroundTeam team, long nowNanos) {
		this.meters.values().forEach((meter) -> {
			if (meter instanceof RateBucket bucket) {
				switch (meter.dimension()) {
					case REQUESTS_PER_MINUTE -> bucket.drain(team.requestsPerMinute(), nowNanos);
					case TOKENS_PER_MINUTE, INPUT_TOKENS_PER_MINUTE -> bucket.drain(team.tokensPerMinute(), nowNanos);
					default -> {
					}
				}
			}
		});
	}

	/**
	 * Charges a team's spending since it was last looked at to this scope's per-day caps.
	 */
	void chargeDays(long requests, long tokens) {
		this.meters.values().forEach((meter) -> {
			if (meter instanceof DayCounter day) {
				day.takeUpTo((meter.dimension() == Dimension.REQUESTS_PER_DAY) ? requests : tokens);
			}
		});
	}

}
