package dev.llmquota.store;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

import dev.llmquota.core.Booking;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.BucketState;
import dev.llmquota.core.Charge;
import dev.llmquota.core.BookingRequest;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.SharedHold;

/**
 * The arguments and replies of {@code quota.lua}, one method per operation. Times cross
 * in microseconds: Lua's numbers are doubles, exact up to 2^53, and Redis's clock in
 * nanoseconds would pass that. A reply's times are turned into the caller's nanoseconds
 * through the Redis time the reply carries, so the two clocks never need to agree.
 */
final class QuotaScript {

	private static final long NANOS_PER_MICRO = 1_000;

	private static final long NANOS_PER_MILLI = 1_000_000;

	/** The script's arguments: its keys and its values. */
	record Call(List<String> keys, List<String> args) {

	}

	private QuotaScript() {
	}

	/** The time argument: the caller's, in tests, or empty for Redis's own clock. */
	static String time(Long callerNanos) {
		return (callerNanos != null) ? Long.toString(callerNanos / NANOS_PER_MICRO) : "";
	}

	/**
	 * A place in line for a shared slot is given up when its call has not asked for this
	 * long: a waiting call asks again at least every half second.
	 */
	static final Duration LINE_STALE = Duration.ofSeconds(2);

	/**
	 * @param place the call's place in line for shared slots, unique across replicas, or
	 * empty for none
	 */
	static Call book(BookingRequest request, String time, long now, long latestStart, String lease, Duration leaseTime,
			Instant wallNow, String place, Predicate<String> firstUse) {
		List<String> keys = new ArrayList<>();
		List<String> args = new ArrayList<>(List.of("book", time,
				(latestStart == Long.MAX_VALUE) ? "-1"
						: Long.toString(Math.max(0, latestStart - now) / NANOS_PER_MICRO),
				Integer.toString(request.charges().size()), Integer.toString(request.slots().size()),
				Integer.toString(request.sanctions().size()), lease, Long.toString(micros(leaseTime))));
		BookingRequest.Reserve reserve = request.reserve();
		args.add((reserve == null) ? "" : reserve.batch() ? "b" : "i");
		args.add((reserve == null) ? "0" : Double.toString(reserve.share()));
		args.add((reserve == null) ? "0" : Long.toString(reserve.lendAfterNanos() / NANOS_PER_MICRO));
		buckets(request.charges(), keys, args, wallNow);
		for (BucketSpec slot : request.slots()) {
			keys.add(slot.key());
			args.add(Long.toString(slot.enforced()));
		}
		args.add(place);
		args.add(Long.toString(micros(LINE_STALE)));
		keys.addAll(request.sanctions());
		if (reserve != null) {
			keys.add(reserve.key());
		}
		for (BucketSpec slot : request.slots()) {
			keys.add(slot.key() + ":line");
			keys.add(slot.key() + ":seen");
			keys.add(slot.key() + ":seq");
		}
		return withEpoch(keys, args, firstUse);
	}

	/**
	 * Names the provider entry's epoch key last, and whether this replica uses its books
	 * for the first time: a replica that used them before and finds the key gone knows
	 * they were lost.
	 * @param firstUse answers, once per epoch key, that it is the first use
	 */
	private static Call withEpoch(List<String> keys, List<String> args, Predicate<String> firstUse) {
		String epoch = keys.isEmpty() ? "llmq:epoch" : epochKey(keys.get(0));
		keys.add(epoch);
		args.add(firstUse.test(epoch) ? "1" : "0");
		return new Call(keys, args);
	}

	/** The epoch key of the provider entry a key belongs to. */
	static String epochKey(String key) {
		int open = key.indexOf('{');
		int close = key.indexOf('}', open + 1);
		return (open >= 0 && close > open) ? "llmq:" + key.substring(open, close + 1) + ":epoch" : "llmq:epoch";
	}

	/**
	 * The charges of a booking, each rate bucket's marked with the time Redis took it at:
	 * the booking's, or ahead of it (the bucket's time after the booking, in the reply).
	 */
	private static List<Charge> taken(List<Object> reply, List<Charge> charges, long redisNow) {
		Charge[] taken = charges.toArray(new Charge[0]);
		for (int i = 0; i < taken.length && reply.size() > 5 + 2 * i; i++) {
			if (!taken[i].bucket().daily()) {
				taken[i] = taken[i].at(redisNow + number(reply, 5 + 2 * i));
			}
		}
		return List.of(taken);
	}

	/**
	 * The wall time a booking counts as booked at: the replica's, or the start of a later
	 * period a daily counter it charged already counts. A replica whose clock is behind
	 * another's past midnight books on the day the other opened (a counter never goes
	 * back): its refunds go to that day, which charged them.
	 */
	private static Instant bookedAt(List<Object> reply, List<Charge> charges, Instant wallNow) {
		Instant at = wallNow;
		for (int i = 0; i < charges.size() && reply.size() > 5 + 2 * i; i++) {
			BucketSpec bucket = charges.get(i).bucket();
			if (bucket.daily()) {
				Instant counted = LocalDate.ofEpochDay(number(reply, 5 + 2 * i))
					.atStartOfDay(bucket.zone())
					.toInstant();
				at = counted.isAfter(at) ? counted : at;
			}
		}
		return at;
	}

	static Booking booking(List<Object> reply, BookingRequest request, long now, Instant wallNow, String lease) {
		int status = integer(reply, 0);
		long redisNow = number(reply, 1);
		if (status == 0) {
			long start = now + Math.max(0, number(reply, 2) - redisNow) * NANOS_PER_MICRO;
			boolean probe = reply.size() > 3 && integer(reply, 3) == 1;
			return new Booking.Booked(start, bookedAt(reply, request.charges(), wallNow),
					taken(reply, request.charges(), redisNow),
					request.slots().isEmpty() ? null : new Booking.Lease(lease, List.copyOf(request.slots())), probe);
		}
		int index = integer(reply, 2) - 1;
		int buckets = request.charges().size();
		int slots = request.slots().size();
		if (status == 1) {
			BucketSpec bucket = (index < buckets) ? request.charges().get(index).bucket()
					: request.slots().get(index - buckets);
			long wait = bucket.daily() ? untilNextDay(bucket, number(reply, 4), wallNow)
					: number(reply, 3) * NANOS_PER_MICRO;
			return new Booking.Refused(bucket, wait);
		}
		String hold = request.sanctions().get(index - buckets - slots);
		if (status == 2) {
			String dimension = string(reply, 4);
			return new Booking.Penalized(hold, dimension.isEmpty() ? null : Dimension.fromId(dimension),
					(number(reply, 3) - redisNow) * NANOS_PER_MICRO);
		}
		String dimension = string(reply, 3);
		String left = string(reply, 5);
		// the reset, a wait on Redis's clock, taken as one on this process's
		return new Booking.Exhausted(hold, dimension.isEmpty() ? null : Dimension.fromId(dimension), string(reply, 4),
				left.isEmpty() ? -1 : Long.parseLong(left) * NANOS_PER_MILLI);
	}

	/**
	 * What a booking left in its buckets, as its reply says: each rate bucket's level at
	 * the caller's monotonic time it holds for, each daily counter's units used on the
	 * day of the booking.
	 */
	static List<Seen> levels(List<Object> reply, BookingRequest request, long now, Instant wallNow) {
		List<Seen> levels = new ArrayList<>();
		if (integer(reply, 0) != 0) {
			return levels;
		}
		List<Charge> charges = request.charges();
		Instant counted = bookedAt(reply, charges, wallNow);
		for (int i = 0; i < charges.size() && 5 + 2 * i < reply.size(); i++) {
			BucketSpec bucket = charges.get(i).bucket();
			levels.add(bucket.daily() ? new Seen(bucket, number(reply, 4 + 2 * i), now, counted) : new Seen(bucket,
					number(reply, 4 + 2 * i), now + number(reply, 5 + 2 * i) * NANOS_PER_MICRO, wallNow));
		}
		return levels;
	}

	/**
	 * A bucket as Redis last said: a rate bucket's level at a monotonic time, or a daily
	 * counter's units used.
	 *
	 * @param bucket the bucket
	 * @param level a rate bucket's level, or a daily counter's units used
	 * @param at the monotonic time it holds for
	 * @param wall the wall time it was said at: the day a daily count is of
	 */
	record Seen(BucketSpec bucket, long level, long at, Instant wall) {

	}

	/**
	 * How long charges wait.
	 * @param unused answers whether this replica has not used an epoch key's books yet,
	 * without marking them used: a read writes nothing
	 */
	static Call waitFor(List<Charge> charges, String time, Instant wallNow, Predicate<String> unused) {
		return waitFor(new BookingRequest(charges, List.of(), List.of(), null), time, wallNow, unused);
	}

	/** How long a booking request waits: as its booking would, the reserve kept back. */
	static Call waitFor(BookingRequest request, String time, Instant wallNow, Predicate<String> unused) {
		List<String> keys = new ArrayList<>();
		List<String> args = new ArrayList<>(List.of("wait", time, Integer.toString(request.charges().size())));
		buckets(request.charges(), keys, args, wallNow);
		BookingRequest.Reserve reserve = request.reserve();
		if (reserve != null) {
			args.addAll(List.of(reserve.batch() ? "b" : "i", Double.toString(reserve.share()),
					Long.toString(reserve.lendAfterNanos() / NANOS_PER_MICRO)));
			keys.add(reserve.key());
		}
		return withEpoch(keys, args, unused);
	}

	static long waitNanos(List<Object> reply, List<Charge> charges, Instant wallNow) {
		if (integer(reply, 0) == 0) {
			return number(reply, 2) * NANOS_PER_MICRO;
		}
		return untilNextDay(charges.get(integer(reply, 2) - 1).bucket(), number(reply, 4), wallNow);
	}

	static Call adjust(List<Charge> corrections, String time, Instant wallNow, Predicate<String> firstUse) {
		return adjust(corrections, time, wallNow, wallNow, firstUse);
	}

	/**
	 * Corrects what a booking charged: a daily counter's charge counts on the period of
	 * now, its refund on the booking's (the script gives back no other period's units).
	 */
	static Call adjust(List<Charge> corrections, String time, Instant wallNow, Instant bookedAt,
			Predicate<String> firstUse) {
		List<String> keys = new ArrayList<>();
		List<String> args = new ArrayList<>(List.of("adjust", time, Integer.toString(corrections.size())));
		for (Charge correction : corrections) {
			bucket(correction, keys, args, (correction.units() < 0) ? bookedAt : wallNow);
		}
		for (Charge correction : corrections) {
			// when Redis took the units a refund gives back, if it lay ahead of the
			// booking
			args.add((correction.takenAt() == Charge.UNKNOWN) ? "" : Long.toString(correction.takenAt()));
		}
		return withEpoch(keys, args, firstUse);
	}

	static Call lower(BucketSpec bucket, long maxLevel, String time, Predicate<String> firstUse) {
		return withEpoch(
				new ArrayList<>(List.of(bucket.key())), new ArrayList<>(List.of("lower", time,
						Long.toString(bucket.enforced()), Long.toString(bucket.capacity()), Long.toString(maxLevel))),
				firstUse);
	}

	/**
	 * A bucket's state.
	 * @param unused as for {@link #waitFor(List, String, Instant, Predicate)}
	 */
	static Call state(BucketSpec bucket, String time, Instant wallNow, Predicate<String> unused) {
		List<String> keys = new ArrayList<>();
		List<String> args = new ArrayList<>(List.of("state", time, "1"));
		buckets(List.of(new Charge(bucket, 0)), keys, args, wallNow);
		return withEpoch(keys, args, unused);
	}

	static BucketState state(List<Object> reply, BucketSpec bucket, Instant wallNow) {
		if (bucket.daily()) {
			return new BucketState(bucket.enforced() - number(reply, 2), bucket.enforced(),
					untilNextDay(bucket, number(reply, 3), wallNow));
		}
		return new BucketState(number(reply, 2), bucket.capacity(), number(reply, 3) * NANOS_PER_MICRO);
	}

	static Call release(Booking.Lease lease, String time) {
		return new Call(lease.slots().stream().map(BucketSpec::key).toList(), List.of("release", time, lease.id()));
	}

	/**
	 * Renews leases whose slots all lie in one Redis Cluster slot (one provider entry).
	 */
	static Call renew(List<Booking.Lease> leases, Duration leaseTime, String time) {
		return leases("renew", leases, leaseTime, time);
	}

	/**
	 * Adds back leases that expired while Redis did not answer; their calls still run.
	 */
	static Call restore(List<Booking.Lease> leases, Duration leaseTime, String time) {
		return leases("restore", leases, leaseTime, time);
	}

	private static Call leases(String op, List<Booking.Lease> leases, Duration leaseTime, String time) {
		List<String> keys = new ArrayList<>();
		List<String> args = new ArrayList<>(List.of(op, time, Long.toString(micros(leaseTime))));
		for (Booking.Lease lease : leases) {
			for (BucketSpec slot : lease.slots()) {
				keys.add(slot.key());
				args.add(lease.id());
			}
		}
		return new Call(keys, args);
	}

	static Call penalize(String hold, Dimension dimension, long waitNanos, String time) {
		return new Call(List.of(hold), List.of("penalize", time, (dimension != null) ? dimension.id() : "",
				Long.toString(Math.max(0, waitNanos) / NANOS_PER_MICRO)));
	}

	static Call exhaust(String hold, Dimension dimension, String reason, Duration wait, long probeIntervalNanos,
			String time) {
		return new Call(List.of(hold),
				List.of("exhaust", time, (dimension != null) ? dimension.id() : "", (reason != null) ? reason : "",
						(wait != null) ? Long.toString(Math.max(0, wait.toMillis())) : "",
						Long.toString(probeIntervalNanos / NANOS_PER_MICRO)));
	}

	static Call clear(String hold, String time) {
		return new Call(List.of(hold), List.of("clear", time));
	}

	static Call held(String hold, String time) {
		return new Call(List.of(hold), List.of("held", time));
	}

	/** What a {@code held} reply says holds every replica's calls now. */
	static SharedHold held(List<Object> reply) {
		long redisNow = number(reply, 1);
		long penaltyEnd = number(reply, 2);
		String dimension = string(reply, 3);
		boolean exhausted = "1".equals(string(reply, 4));
		String left = string(reply, 6);
		return new SharedHold(dimension.isEmpty() ? null : Dimension.fromId(dimension),
				Math.max(0, penaltyEnd - redisNow) * NANOS_PER_MICRO, exhausted, exhausted ? string(reply, 5) : null,
				left.isEmpty() ? -1 : Long.parseLong(left) * NANOS_PER_MILLI);
	}

	static Call publishLimit(String key, String field, long limit, String time) {
		return new Call(List.of(key), List.of("limit", time, field, Long.toString(limit)));
	}

	static Call limits(String key, String time) {
		return new Call(List.of(key), List.of("limits", time));
	}

	/**
	 * A replica says it is live for the provider entry of a key, for {@code ttl}, on
	 * Redis's clock whatever the caller's.
	 */
	static Call alive(String entryKey, String replica, Duration ttl) {
		return new Call(List.of("llmq:{" + hashTag(entryKey) + "}:replicas"),
				List.of("alive", "", replica, Long.toString(ttl.toNanos() / NANOS_PER_MICRO)));
	}

	/** The live replicas of an {@code alive} reply. */
	static long liveReplicas(List<Object> reply) {
		return number(reply, 2);
	}

	/** The fields of a {@code limits} reply, the version {@code v} among them. */
	static Map<String, Long> limits(List<Object> reply) {
		Map<String, Long> limits = new LinkedHashMap<>();
		for (int i = 2; i + 1 < reply.size(); i += 2) {
			limits.put(string(reply, i), number(reply, i + 1));
		}
		return limits;
	}

	/**
	 * Returns the Redis Cluster hash tag of a key: every key of one provider entry shares
	 * it.
	 */
	static String hashTag(String key) {
		int open = key.indexOf('{');
		int close = key.indexOf('}', open + 1);
		return (open >= 0 && close > open) ? key.substring(open + 1, close) : key;
	}

	private static void buckets(List<Charge> charges, List<String> keys, List<String> args, Instant wallNow) {
		for (Charge charge : charges) {
			bucket(charge, keys, args, wallNow);
		}
	}

	/**
	 * A charge's key and arguments: a daily counter's name the period of {@code wall}.
	 */
	private static void bucket(Charge charge, List<String> keys, List<String> args, Instant wall) {
		BucketSpec bucket = charge.bucket();
		keys.add(bucket.key());
		if (bucket.daily()) {
			args.addAll(List.of("d", Long.toString(charge.units()), Long.toString(bucket.enforced()), Long
				.toString(bucket.dimension().periodStart(LocalDate.ofInstant(wall, bucket.zone())).toEpochDay())));
		}
		else {
			args.addAll(List.of("r", Long.toString(charge.units()), Long.toString(bucket.enforced()),
					Long.toString(bucket.capacity())));
		}
	}

	/**
	 * Nanoseconds from now until the period after the stored one starts (the next day, or
	 * month), at least 1.
	 */
	private static long untilNextDay(BucketSpec bucket, long storedDay, Instant wallNow) {
		Instant next = bucket.dimension()
			.nextPeriod(LocalDate.ofEpochDay(storedDay))
			.atStartOfDay(bucket.zone())
			.toInstant();
		return Math.max(1, Duration.between(wallNow, next).toNanos());
	}

	private static long micros(Duration duration) {
		return duration.toNanos() / NANOS_PER_MICRO;
	}

	private static long number(List<Object> reply, int index) {
		Object value = reply.get(index);
		return (value instanceof Number number) ? number.longValue() : Long.parseLong(value.toString());
	}

	private static int integer(List<Object> reply, int index) {
		return (int) number(reply, index);
	}

	private static String string(List<Object> reply, int index) {
		Object value = reply.get(index);
		return (value != null) ? value.toString() : "";
	}

}
