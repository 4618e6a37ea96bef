package dev.llmquota.store;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

import dev.llmquota.core.Booking;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.BucketState;
import dev.llmquota.core.Charge;
import dev.llmquota.core.BookingRequest;
import dev.llmquota.core.DayCounter;
import dev.llmquota.core.QuotaStore;
import dev.llmquota.core.kernel.RateBucket;

/**
 * The in-process store: every bucket of this process in one map behind one lock. Each
 * decision takes microseconds, so one lock costs less than the bookkeeping that finer
 * locks would need to keep multi-bucket decisions atomic.
 */
public final class LocalQuotaStore implements QuotaStore {

	private final ReentrantLock lock = new ReentrantLock();

	private final Map<String, RateBucket> rates = new HashMap<>();

	private final Map<String, DayCounter> days = new HashMap<>();

	/**
	 * The buckets of the booking being decided, under the lock: each is looked up once,
	 * asked, then charged; kept from one booking to the next.
	 */
	private Object[] booking = new Object[8];

	/** When an interactive call last waited, by account. */
	private final Map<String, Long> interactiveWaits = new HashMap<>();

	@Override
	public Booking book(List<Charge> charges, long now, Instant wallNow, long latestStart) {
		return book(new BookingRequest(charges), now, wallNow, latestStart);
	}

	/**
	 * {@inheritDoc} A booking charges each bucket once: a pool's buckets and its
	 * account's have different keys, and the shared store loads each charge's bucket on
	 * its own.
	 */
	@Override
	public Booking book(BookingRequest request, long now, Instant wallNow, long latestStart) {
		this.lock.lock();
		try {
			BookingRequest.Reserve keep = keptBack(request.reserve(), now);
			List<Charge> charges = request.charges();
			if (this.booking.length < charges.size()) {
				this.booking = new Object[charges.size()];
			}
			Object[] buckets = this.booking;
			BucketSpec binding = null;
			long longest = -1;
			long unsaved = 0;
			for (int i = 0; i < charges.size(); i++) {
				Charge charge = charges.get(i);
				long wait;
				if (charge.bucket().daily()) {
					DayCounter counter = day(charge.bucket(), wallNow);
					buckets[i] = counter;
					wait = dayWait(counter, charge, wallNow);
				}
				else {
					RateBucket stored = this.rates.get(charge.bucket().key());
					RateBucket bucket = under(charge.bucket(), stored, now);
					if (bucket != stored) {
						// kept only if the booking takes from it
						unsaved |= (i < Long.SIZE) ? 1L << i : 0;
					}
					buckets[i] = bucket;
					wait = rateWait(bucket, charge, keep, now);
				}
				// A daily counter is not booked ahead into the next day: the caller asks
				// again then.
				if (charge.bucket().daily() && wait > 0) {
					waited(request.reserve(), now);
					return new Booking.Refused(charge.bucket(), wait);
				}
				if (wait > longest) {
					longest = wait;
					binding = charge.bucket();
				}
			}
			long wait = Math.max(0, longest);
			if (wait > 0) {
				waited(request.reserve(), now);
			}
			if (binding != null && (wait == Long.MAX_VALUE || wait > latestStart - now)) {
				return new Booking.Refused(binding, wait);
			}
			long start = now + wait;
			Charge[] taken = charges.toArray(new Charge[0]);
			// when the call counts as booked: a day counter that a wall clock stepped
			// back finds ahead of it charges its own day, where the refund must go too
			Instant bookedAt = wallNow;
			for (int i = 0; i < charges.size(); i++) {
				Charge charge = charges.get(i);
				if (buckets[i] instanceof DayCounter counter) {
					counter.add(charge.units(), wallNow);
					Instant counted = counter.countedSince();
					bookedAt = counted.isAfter(bookedAt) ? counted : bookedAt;
				}
				else {
					// Each bucket is charged when it allows the call, not at the call's
					// start: a bucket with room now is not held until a slower bucket
					// allows the call.
					RateBucket bucket = (RateBucket) buckets[i];
					if (i >= Long.SIZE || (unsaved & (1L << i)) != 0) {
						this.rates.put(charge.bucket().key(), bucket);
					}
					long at = now + rateWait(bucket, charge, keep, now);
					bucket.advance(now);
					bucket.take(charge.units(), at);
					taken[i] = charge.at(at);
				}
			}
			return new Booking.Booked(start, bookedAt, List.of(taken));
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public long nanosUntilAvailable(List<Charge> charges, long now, Instant wallNow) {
		return nanosUntilAvailable(new BookingRequest(charges), now, wallNow);
	}

	@Override
	public long nanosUntilAvailable(BookingRequest request, long now, Instant wallNow) {
		this.lock.lock();
		try {
			BookingRequest.Reserve keep = keptBack(request.reserve(), now);
			long wait = 0;
			for (Charge charge : request.charges()) {
				wait = Math.max(wait, waitFor(charge, keep, now, wallNow));
			}
			return wait;
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public void cancel(Booking.Booked booking, long now, Instant wallNow) {
		this.lock.lock();
		try {
			for (Charge refund : booking.refunds(wallNow)) {
				adjustLocked(refund, now, wallNow);
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public void adjust(BucketSpec bucket, long units, long now, Instant wallNow) {
		this.lock.lock();
		try {
			adjustLocked(new Charge(bucket, units), now, wallNow);
		}
		finally {
			this.lock.unlock();
		}
	}

	/** One lock for them all, and each refund knows when its units were taken. */
	@Override
	public void adjust(List<Charge> corrections, long now, Instant wallNow) {
		this.lock.lock();
		try {
			for (Charge correction : corrections) {
				adjustLocked(correction, now, wallNow);
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public void lowerTo(BucketSpec bucket, long maxLevel, long now) {
		if (bucket.daily()) {
			return;
		}
		this.lock.lock();
		try {
			rate(bucket, now, true).lowerTo(maxLevel, now);
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public BucketState state(BucketSpec bucket, long now, Instant wallNow) {
		this.lock.lock();
		try {
			if (bucket.daily()) {
				DayCounter counter = day(bucket, wallNow);
				long untilReset = Duration.between(wallNow, counter.nextReset(wallNow)).toNanos();
				return new BucketState(counter.limit() - counter.used(wallNow), counter.limit(), untilReset);
			}
			RateBucket rate = rate(bucket, now, false);
			return new BucketState(rate.level(now), rate.capacity(), rate.nanosUntilFull(now));
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public void forget(List<BucketSpec> buckets) {
		this.lock.lock();
		try {
			for (BucketSpec bucket : buckets) {
				this.rates.remove(bucket.key());
				this.days.remove(bucket.key());
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Returns how many buckets the store holds.
	 * @return the number of buckets
	 */
	public int size() {
		this.lock.lock();
		try {
			return this.rates.size() + this.days.size();
		}
		finally {
			this.lock.unlock();
		}
	}

	private void adjustLocked(Charge correction, long now, Instant wallNow) {
		BucketSpec bucket = correction.bucket();
		long units = correction.units();
		if (bucket.daily()) {
			day(bucket, wallNow).add(units, wallNow);
		}
		else if (units >= 0) {
			RateBucket rate = rate(bucket, now, true);
			rate.advance(now);
			rate.take(units, now);
		}
		else {
			rate(bucket, now, true).give(-units, correction.takenAt(), now);
		}
	}

	private long waitFor(Charge charge, BookingRequest.Reserve keep, long now, Instant wallNow) {
		BucketSpec spec = charge.bucket();
		if (spec.daily()) {
			return dayWait(day(spec, wallNow), charge, wallNow);
		}
		return rateWait(rate(spec, now, false), charge, keep, now);
	}

	private static long dayWait(DayCounter counter, Charge charge, Instant wallNow) {
		if (counter.fits(charge.units(), wallNow)) {
			return 0;
		}
		return Math.max(1, Duration.between(wallNow, counter.nextReset(wallNow)).toNanos());
	}

	private static long rateWait(RateBucket bucket, Charge charge, BookingRequest.Reserve keep, long now) {
		long floor = (keep != null) ? keep.floor(bucket.capacity()) : 0;
		return bucket.nanosUntil(charge.units(), floor, now);
	}

	/**
	 * Returns the reserve a batch call must leave: the request's, while an interactive
	 * call waited within the lending time; otherwise {@code null} (the reserve is lent).
	 */
	private BookingRequest.Reserve keptBack(BookingRequest.Reserve reserve, long now) {
		if (reserve == null || !reserve.batch() || reserve.share() <= 0) {
			return null;
		}
		Long last = this.interactiveWaits.get(reserve.key());
		return (last != null && now - last < reserve.lendAfterNanos()) ? reserve : null;
	}

	/** Records that an interactive call could not start at once. */
	private void waited(BookingRequest.Reserve reserve, long now) {
		if (reserve != null && !reserve.batch()) {
			this.interactiveWaits.merge(reserve.key(), now, Math::max);
		}
	}

	/**
	 * Returns a bucket under its spec's limits. A new bucket starts full; a bucket whose
	 * limits changed keeps its level and time. Only a write keeps what it found: a read
	 * leaves the books as they were, as the shared store's reads do.
	 */
	private RateBucket rate(BucketSpec spec, long now, boolean write) {
		RateBucket stored = this.rates.get(spec.key());
		RateBucket bucket = under(spec, stored, now);
		if (write && bucket != stored) {
			this.rates.put(spec.key(), bucket);
		}
		return bucket;
	}

	/** The stored bucket if its limits are the spec's, else a bucket under them. */
	private static RateBucket under(BucketSpec spec, RateBucket stored, long now) {
		if (stored == null) {
			return new RateBucket(spec.enforced(), spec.capacity(), now);
		}
		if (stored.ratePerMinute() != spec.enforced() || stored.capacity() != spec.capacity()) {
			return stored.withLimits(spec.enforced(), spec.capacity());
		}
		return stored;
	}

	private DayCounter day(BucketSpec spec, Instant wallNow) {
		DayCounter counter = this.days.get(spec.key());
		if (counter == null || counter.limit() != spec.enforced()) {
			counter = (counter != null) ? DayCounter.restore(spec.enforced(), spec.zone(), counter.day(),
					counter.used(wallNow), spec.dimension())
					: new DayCounter(spec.enforced(), spec.zone(), wallNow, spec.dimension());
			this.days.put(spec.key(), counter);
		}
		return counter;
	}

}
