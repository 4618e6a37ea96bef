package dev.llmquota.core;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A store that records every unit it takes or gives per bucket, around a real store, so
 * tests can check what was charged over any window.
 */
public final class RecordingStore implements QuotaStore {

	/**
	 * One change to a bucket.
	 *
	 * @param time when
	 * @param units units taken (negative: given back)
	 * @param admission whether an admission took them, and so checked the level first
	 */
	public record Entry(long time, long units, boolean admission) {

	}

	private final QuotaStore delegate;

	private final Map<BucketSpec, List<Entry>> entries = new ConcurrentHashMap<>();

	public RecordingStore(QuotaStore delegate) {
		this.delegate = delegate;
	}

	/**
	 * Returns every change, per bucket.
	 * @return the changes
	 */
	public Map<BucketSpec, List<Entry>> entries() {
		return this.entries;
	}

	@Override
	public synchronized Booking book(List<Charge> charges, long now, Instant wallNow, long latestStart) {
		Booking booking = this.delegate.book(charges, now, wallNow, latestStart);
		if (booking instanceof Booking.Booked booked) {
			// The engine sends the call when the booking answers: that is when the
			// provider sees it.
			charges.forEach((charge) -> log(charge.bucket(), new Entry(now, charge.units(), true)));
		}
		return booking;
	}

	@Override
	public long nanosUntilAvailable(List<Charge> charges, long now, Instant wallNow) {
		return this.delegate.nanosUntilAvailable(charges, now, wallNow);
	}

	@Override
	public synchronized void cancel(Booking.Booked booking, long now, Instant wallNow) {
		this.delegate.cancel(booking, now, wallNow);
		booking.charges().forEach((charge) -> log(charge.bucket(), new Entry(now, -charge.units(), false)));
	}

	@Override
	public synchronized void adjust(BucketSpec bucket, long units, long now, Instant wallNow) {
		this.delegate.adjust(bucket, units, now, wallNow);
		log(bucket, new Entry(now, units, false));
	}

	@Override
	public void lowerTo(BucketSpec bucket, long maxLevel, long now) {
		this.delegate.lowerTo(bucket, maxLevel, now);
	}

	@Override
	public BucketState state(BucketSpec bucket, long now, Instant wallNow) {
		return this.delegate.state(bucket, now, wallNow);
	}

	/**
	 * Returns the units a bucket holds taken, net of what was given back.
	 * @param bucket the bucket
	 * @return the net units
	 */
	public synchronized long net(BucketSpec bucket) {
		return this.entries.getOrDefault(bucket, List.of()).stream().mapToLong(Entry::units).sum();
	}

	private void log(BucketSpec bucket, Entry entry) {
		this.entries.computeIfAbsent(bucket, (key) -> new ArrayList<>()).add(entry);
	}

}
