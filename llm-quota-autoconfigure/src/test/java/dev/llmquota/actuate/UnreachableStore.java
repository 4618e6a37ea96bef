package dev.llmquota.actuate;

import java.time.Instant;
import java.util.List;

import dev.llmquota.core.Booking;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.BucketState;
import dev.llmquota.core.Charge;
import dev.llmquota.core.QuotaStore;

/**
 * A store whose server does not answer.
 */
class UnreachableStore implements QuotaStore {

	@Override
	public boolean isAvailable() {
		return false;
	}

	@Override
	public Booking book(List<Charge> charges, long now, Instant wallNow, long latestStart) {
		throw new IllegalStateException("unreachable");
	}

	@Override
	public long nanosUntilAvailable(List<Charge> charges, long now, Instant wallNow) {
		throw new IllegalStateException("unreachable");
	}

	@Override
	public void cancel(Booking.Booked booking, long now, Instant wallNow) {
		throw new IllegalStateException("unreachable");
	}

	@Override
	public void adjust(BucketSpec bucket, long units, long now, Instant wallNow) {
		throw new IllegalStateException("unreachable");
	}

	@Override
	public void lowerTo(BucketSpec bucket, long maxLevel, long now) {
		throw new IllegalStateException("unreachable");
	}

	@Override
	public BucketState state(BucketSpec bucket, long now, Instant wallNow) {
		throw new IllegalStateException("unreachable");
	}

}
