package dev.llmquota.store;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import dev.llmquota.core.Booking;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.Charge;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.QuotaStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The shared store against the local one, on a real Redis server with the script running
 * on the test's clock: the same operations, the same answers. The contract tests say what
 * each store must do; this says they do it alike where the contract does not reach.
 */
class StoresAgreeTests {

	private static final long SECOND = 1_000_000_000L;

	private static LettuceConnectionFactory connectionFactory;

	/**
	 * The keys of one provider entry of this test's own (a hash tag): its books' epoch is
	 * its own, whatever books other tests on this Redis lost.
	 */
	private final String prefix = "{agree-" + System.nanoTime() + "}-";

	private QuotaStore shared;

	private long now = 1_000 * SECOND;

	private Instant wall = Instant.parse("2026-11-30T12:00:00Z");

	@BeforeAll
	static void connect() {
		connectionFactory = EmbeddedRedis.shared().connectionFactory();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@BeforeEach
	void createTheStore() {
		this.shared = new RedisQuotaStore(connectionFactory, new RedisQuotaStore.Settings(
				RedisQuotaStore.OnFailure.REJECT, 0.25, Duration.ofSeconds(30), Duration.ofSeconds(2)), () -> this.now);
	}

	@AfterEach
	void closeTheStore() {
		this.shared.close();
	}

	private void advance(Duration duration) {
		this.now += duration.toNanos();
		this.wall = this.wall.plus(duration);
	}

	/**
	 * The shared store keeps the books the local one keeps: random bookings (now or
	 * ahead, on one or two rate buckets and a daily counter), cancels, refunds with and
	 * without a time of taking, charges into debt, lowerings, reads, and limits that
	 * change, run on both stores at the same times, in whole microseconds. Every answer
	 * agrees: booked or refused, the binding bucket, every level within a unit, and the
	 * start and the wait within the time a unit takes to refill at the slowest rate.
	 * Redis counts time in microseconds, and a booking ahead starts on its microsecond:
	 * the fraction of a unit that leaves takes less than a unit's refill time.
	 */
	@Test
	void keepsTheSameBooksAsTheLocalStore() {
		for (long seed = 0; seed < 8; seed++) {
			SplittableRandom random = new SplittableRandom(seed);
			QuotaStore local = new LocalQuotaStore();
			String key = this.prefix + "same-" + seed + "-";
			// two buckets, each with two capacities it switches between (a rate that
			// changes too would leave the fraction of a unit a booking ahead's
			// microsecond
			// makes worth many units at a faster rate: no drift to find, only grain)
			BucketSpec[][] specs = new BucketSpec[2][2];
			for (int b = 0; b < 2; b++) {
				long rate = 1 + random.nextLong(random.nextBoolean() ? 600 : 3_000_000);
				for (int l = 0; l < 2; l++) {
					long capacity = 1 + random.nextLong(Math.max(1, rate / (1 + random.nextInt(60))) + 1);
					specs[b][l] = new BucketSpec(key + b, BucketSpec.Scope.POOL, Dimension.TOKENS_PER_MINUTE, rate,
							capacity, ZoneId.of("UTC"));
				}
			}
			// a microsecond, and a unit's refill at the slower rate
			long slowest = Arrays.stream(specs)
				.flatMap(Arrays::stream)
				.mapToLong(BucketSpec::enforced)
				.min()
				.orElseThrow();
			long unitTime = 1_000 + 60 * SECOND / slowest;
			BucketSpec day = new BucketSpec(key + "day", BucketSpec.Scope.ACCOUNT, Dimension.REQUESTS_PER_DAY, 40, 40,
					ZoneId.of("UTC"));
			int[] limits = { 0, 0 };
			List<Booking.Booked[]> standing = new ArrayList<>();
			for (int step = 0; step < 120; step++) {
				String at = "seed " + seed + " step " + step;
				int op = random.nextInt(20);
				int b = random.nextInt(2);
				BucketSpec spec = specs[b][limits[b]];
				if (op < 5) {
					advance(Duration.ofNanos(1_000 * random.nextLong(1 + random.nextLong(3_000_000))));
				}
				else if (op < 10) {
					List<Charge> charges = new ArrayList<>();
					charges.add(new Charge(spec, 1 + random.nextLong(spec.capacity() + 2)));
					if (random.nextBoolean()) {
						BucketSpec other = specs[1 - b][limits[1 - b]];
						charges.add(new Charge(other, 1 + random.nextLong(other.capacity())));
					}
					if (random.nextInt(4) == 0) {
						charges.add(new Charge(day, 1));
					}
					long latest = random.nextBoolean() ? this.now : Long.MAX_VALUE;
					Booking mine = local.book(charges, this.now, this.wall, latest);
					Booking shared = this.shared.book(charges, this.now, this.wall, latest);
					assertThat(shared.getClass()).as(at + ": booked or refused").isEqualTo(mine.getClass());
					if (mine instanceof Booking.Booked booked) {
						assertThat(((Booking.Booked) shared).start()).as(at + ": the start")
							.isCloseTo(booked.start(), within(unitTime));
						standing.add(new Booking.Booked[] { booked, (Booking.Booked) shared });
					}
					else {
						assertThat(((Booking.Refused) shared).bucket()).as(at + ": the binding bucket")
							.isEqualTo(((Booking.Refused) mine).bucket());
						assertThat(((Booking.Refused) shared).waitNanos()).as(at + ": the wait")
							.isCloseTo(((Booking.Refused) mine).waitNanos(), within(unitTime));
					}
				}
				else if (op < 13 && !standing.isEmpty()) {
					Booking.Booked[] both = standing.remove(random.nextInt(standing.size()));
					local.cancel(both[0], this.now, this.wall);
					this.shared.cancel(both[1], this.now, this.wall);
				}
				else if (op < 15) {
					long units = random.nextLong(-spec.capacity(), spec.capacity() + 1);
					local.adjust(spec, units, this.now, this.wall);
					this.shared.adjust(spec, units, this.now, this.wall);
				}
				else if (op < 16) {
					long level = random.nextLong(-spec.capacity(), spec.capacity() + 1);
					local.lowerTo(spec, level, this.now);
					this.shared.lowerTo(spec, level, this.now);
				}
				else if (op < 18) {
					limits[b] = 1 - limits[b];
				}
				else {
					Charge charge = new Charge(spec, 1 + random.nextLong(spec.capacity()));
					assertThat(this.shared.nanosUntilAvailable(List.of(charge), this.now, this.wall))
						.as(at + ": the wait read")
						.isCloseTo(local.nanosUntilAvailable(List.of(charge), this.now, this.wall), within(unitTime));
				}
				for (BucketSpec[] bucket : specs) {
					for (BucketSpec seen : bucket) {
						assertThat(this.shared.state(seen, this.now, this.wall).remaining())
							.as(at + ": the level of " + seen)
							.isCloseTo(local.state(seen, this.now, this.wall).remaining(), within(1L));
					}
				}
			}
			local.close();
		}
	}

	/**
	 * Replicas whose wall clocks differ by seconds around midnight: the one ahead opens
	 * the new day's count, and the one behind, still before midnight, books on that count
	 * (it never goes back). A call the replica behind cancels gives back what it took, as
	 * the local store does when its own clock steps back over midnight.
	 */
	@Test
	void aReplicaBehindMidnightGetsBackTheDailyUnitsItsCancelledCallTook() {
		BucketSpec day = new BucketSpec(this.prefix + "skew-day", BucketSpec.Scope.ACCOUNT, Dimension.REQUESTS_PER_DAY,
				10, 10, ZoneId.of("UTC"));
		Instant ahead = Instant.parse("2026-12-01T00:00:02Z");
		Instant behind = Instant.parse("2026-11-30T23:59:59Z");
		QuotaStore local = new LocalQuotaStore();
		QuotaStore other = new RedisQuotaStore(connectionFactory, new RedisQuotaStore.Settings(
				RedisQuotaStore.OnFailure.REJECT, 0.25, Duration.ofSeconds(30), Duration.ofSeconds(2)), () -> this.now);
		try {
			List<Charge> one = List.of(new Charge(day, 1));
			// the replica ahead books on the new day; the one behind books and cancels
			local.book(one, this.now, ahead, this.now);
			Booking.Booked mine = (Booking.Booked) local.book(one, this.now, behind, this.now);
			local.cancel(mine, this.now, behind);
			other.book(one, this.now, ahead, this.now);
			Booking.Booked shared = (Booking.Booked) this.shared.book(one, this.now, behind, this.now);
			this.shared.cancel(shared, this.now, behind);
			assertThat(local.state(day, this.now, ahead).remaining()).as("the local store").isEqualTo(9);
			assertThat(this.shared.state(day, this.now, ahead).remaining()).as("the shared store")
				.isEqualTo(local.state(day, this.now, ahead).remaining());
		}
		finally {
			other.close();
			local.close();
		}
	}

}
