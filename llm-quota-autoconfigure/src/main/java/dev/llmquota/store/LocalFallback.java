package dev.llmquota.store;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToDoubleFunction;
import java.util.function.ToIntFunction;

import dev.llmquota.core.Booking;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.BucketState;
import dev.llmquota.core.Charge;
import dev.llmquota.core.BookingRequest;

/**
 * The books a replica keeps while Redis does not answer: this replica's share of every
 * limit and shared slot, {@code local-share} at most and one over the replicas live for
 * the provider entry when Redis last said. A booking made here is marked so, and every
 * correction of it comes back here, even once Redis answers again: Redis never charged
 * it.
 */
final class LocalFallback {

	private static final String LEASE_PREFIX = "local:";

	private final LocalQuotaStore books = new LocalQuotaStore();

	/** Slots taken here, by key. */
	private final Map<String, AtomicInteger> slots = new ConcurrentHashMap<>();

	private final AtomicLong leaseIds = new AtomicLong();

	/** This replica's share of a provider entry's limits, by the entry's hash tag. */
	private final ToDoubleFunction<String> share;

	private final Duration leaseTime;

	/**
	 * What these books charged each bucket since Redis stopped answering, a daily counter
	 * by the period it counted: handed over to Redis when it answers again, which never
	 * saw it.
	 */
	private final Map<String, Charged> charged = new ConcurrentHashMap<>();

	/**
	 * @param period the first day of the period a daily counter's units were counted in;
	 * {@code null} for a rate bucket
	 */
	private record Charged(BucketSpec bucket, LocalDate period, LongAdder units) {

	}

	/** This replica's calls in flight on a shared slot's key, booked in Redis. */
	private final ToIntFunction<String> heldInRedis;

	LocalFallback(ToDoubleFunction<String> share, ToIntFunction<String> heldInRedis, Duration leaseTime) {
		this.share = share;
		this.heldInRedis = heldInRedis;
		this.leaseTime = leaseTime;
	}

	Booking book(BookingRequest request, long now, Instant wallNow, long latestStart) {
		for (BucketSpec slot : request.slots()) {
			AtomicInteger taken = this.slots.computeIfAbsent(slot.key(), (key) -> new AtomicInteger());
			// this replica's share holds its calls booked in Redis and still running too
			if (taken.get() + this.heldInRedis.applyAsInt(slot.key()) >= shareOf(slot, slot.enforced())) {
				return new Booking.Refused(slot, this.leaseTime.toNanos());
			}
		}
		Booking booking = this.books.book(scaled(request), now, wallNow, latestStart);
		if (!(booking instanceof Booking.Booked booked)) {
			return booking;
		}
		request.slots().forEach((slot) -> this.slots.get(slot.key()).incrementAndGet());
		record(request.charges(), wallNow);
		Booking.Lease lease = request.slots().isEmpty() ? null
				: new Booking.Lease(LEASE_PREFIX + this.leaseIds.incrementAndGet(), List.copyOf(request.slots()));
		// the caller keeps the real buckets, each taken when the local books took it:
		// corrections after Redis is back come here
		Charge[] charges = request.charges().toArray(new Charge[0]);
		for (int i = 0; i < charges.length; i++) {
			charges[i] = charges[i].at(booked.charges().get(i).takenAt());
		}
		return new Booking.Booked(booked.start(), booked.bookedAt(), List.of(charges), lease, false, true);
	}

	long nanosUntilAvailable(BookingRequest request, long now, Instant wallNow) {
		return this.books.nanosUntilAvailable(scaled(request), now, wallNow);
	}

	void adjust(List<Charge> corrections, long now, Instant wallNow) {
		this.books.adjust(scaled(corrections), now, wallNow);
		record(corrections, wallNow);
	}

	/**
	 * Corrects a booking made here whose reservation Redis was handed as it answered
	 * again: in these books alone, not recorded to be handed over (its charges go to
	 * Redis as they are made; recorded too, one made as Redis came back would reach it
	 * twice).
	 */
	void adjustHandedOver(List<Charge> corrections, long now, Instant wallNow) {
		this.books.adjust(scaled(corrections), now, wallNow);
	}

	private void record(List<Charge> charges, Instant wallNow) {
		for (Charge charge : charges) {
			BucketSpec bucket = charge.bucket();
			LocalDate period = bucket.daily() ? period(bucket, wallNow) : null;
			this.charged
				.computeIfAbsent((period != null) ? bucket.key() + "@" + period : bucket.key(),
						(key) -> new Charged(bucket, period, new LongAdder()))
				.units()
				.add(charge.units());
		}
	}

	private static LocalDate period(BucketSpec bucket, Instant wallNow) {
		return bucket.dimension().periodStart(LocalDate.ofInstant(wallNow, bucket.zone()));
	}

	/**
	 * What Redis is to be charged as it answers again, and forgets it here: each daily
	 * counter what these books counted in the period now counting (a period that ended is
	 * no longer Redis's to count); each rate bucket what they charged, at most this
	 * replica's share of its capacity (what was charged longer ago than a window has
	 * refilled since). Calls still in flight are handed over with what they reserved;
	 * their later refunds stay here, with the books that booked them.
	 * @param wallNow the wall time, whose period daily counters count
	 * @return the charges for Redis
	 */
	List<Charge> handOver(Instant wallNow) {
		List<Charge> handed = new ArrayList<>();
		for (Iterator<Charged> it = this.charged.values().iterator(); it.hasNext();) {
			Charged charged = it.next();
			it.remove();
			long units = charged.units().sum();
			BucketSpec bucket = charged.bucket();
			if (charged.period() != null && !charged.period().equals(period(bucket, wallNow))) {
				continue;
			}
			long owed = bucket.daily() ? units : Math.min(units, shareOf(bucket, bucket.capacity()));
			if (owed > 0) {
				handed.add(new Charge(bucket, owed));
			}
		}
		return handed;
	}

	void lowerTo(BucketSpec bucket, long maxLevel, long now) {
		this.books.lowerTo(scaled(bucket), (long) Math.floor(maxLevel * share(bucket)), now);
	}

	/**
	 * Starts the books from what Redis last said of each rate bucket, this replica's
	 * share of it, rather than full: a fallback that starts full admits a whole bucket's
	 * worth on top of what the account has just used.
	 */
	void startFrom(Collection<QuotaScript.Seen> levels) {
		this.charged.clear();
		for (QuotaScript.Seen seen : levels) {
			BucketSpec scaled = scaled(seen.bucket());
			if (!seen.bucket().daily()) {
				this.books.lowerTo(scaled, (long) Math.floor(seen.level() * share(seen.bucket())), seen.at());
				continue;
			}
			// a daily count: this replica's share of what the day has used, so the
			// replicas together leave what Redis had left (never a fresh day); a count of
			// another day than the one it was seen on starts unused, as it should
			long target = (long) Math.ceil(seen.level() * share(seen.bucket()));
			long used = scaled.enforced() - this.books.state(scaled, seen.at(), seen.wall()).remaining();
			if (target > used) {
				this.books.adjust(List.of(new Charge(scaled, target - used)), seen.at(), seen.wall());
			}
		}
	}

	BucketState state(BucketSpec bucket, long now, Instant wallNow) {
		return this.books.state(scaled(bucket), now, wallNow);
	}

	/** Whether the lease was taken here, in fallback. */
	static boolean holds(Booking.Lease lease) {
		return lease.id().startsWith(LEASE_PREFIX);
	}

	void release(Booking.Lease lease) {
		lease.slots().forEach((slot) -> this.slots.get(slot.key()).decrementAndGet());
	}

	private double share(BucketSpec bucket) {
		return this.share.applyAsDouble(QuotaScript.hashTag(bucket.key()));
	}

	private long shareOf(BucketSpec bucket, long units) {
		return Math.max(1, (long) Math.floor(units * share(bucket)));
	}

	/**
	 * A booking's charges in these books, its interactive reserve kept as the shared
	 * books keep it; its slots are counted here apart.
	 */
	private BookingRequest scaled(BookingRequest request) {
		return new BookingRequest(scaled(request.charges()), List.of(), List.of(), request.reserve());
	}

	private List<Charge> scaled(List<Charge> charges) {
		List<Charge> scaled = new ArrayList<>(charges.size());
		for (Charge charge : charges) {
			scaled.add(new Charge(scaled(charge.bucket()), charge.units(), charge.takenAt()));
		}
		return scaled;
	}

	private BucketSpec scaled(BucketSpec bucket) {
		return new BucketSpec(bucket.key(), bucket.scope(), bucket.dimension(), shareOf(bucket, bucket.enforced()),
				shareOf(bucket, bucket.capacity()), bucket.zone());
	}

}
