package dev.llmquota.store;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import dev.llmquota.core.Booking;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.Charge;
import dev.llmquota.core.QuotaStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Redis store against the store contract, on a real Redis server, with the script
 * running on the test's clock.
 */
class RedisQuotaStoreTests extends QuotaStoreContractTests {

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		connectionFactory = EmbeddedRedis.shared().connectionFactory();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	/**
	 * A booking Redis answered after its call stopped waiting is given back when its
	 * answer lands, with the wall time it was booked at, and maybe on a later day: its
	 * daily charge comes back from the day that took it, never from the day counting when
	 * it lands (that day's calls would go uncounted).
	 */
	@Test
	void aBookingGivenBackOnALaterDayRefundsNothingOfThatDay() {
		this.wall = Instant.parse("2026-11-30T23:59:50Z");
		BucketSpec day = daily("d", 10);
		Instant bookedAt = this.wall;
		Booking.Booked late = (Booking.Booked) this.store.book(List.of(new Charge(day, 1)), this.now, this.wall,
				this.now);
		advance(Duration.ofSeconds(20));
		this.store.book(List.of(new Charge(day, 1)), this.now, this.wall, this.now);
		this.store.cancel(late, this.now, bookedAt);
		assertThat(remaining(day)).as("the new day's one call").isEqualTo(9);
	}

	/**
	 * Books lost (a restart without persistence) start empty at the loss for a replica
	 * that used them: reads say so as bookings do, where they read a missing bucket as
	 * full, telling the routes and the actuator it was free while bookings were refused.
	 */
	@Test
	void readsAfterTheBooksWereLostAgreeWithBookings() {
		BucketSpec bucket = rate("lost");
		this.store.book(List.of(new Charge(bucket, 4)), this.now, this.wall, this.now);
		this.store.state(bucket, this.now, this.wall);
		new ReactiveStringRedisTemplate(connectionFactory).delete(bucket.key(), QuotaScript.epochKey(bucket.key()))
			.block(Duration.ofSeconds(5));
		assertThat(remaining(bucket)).as("the level read").isEqualTo(0);
		assertThat(this.store.nanosUntilAvailable(List.of(new Charge(bucket, 3)), this.now, this.wall))
			.as("the wait read")
			.isEqualTo(3 * SECOND);
		Booking refused = this.store.book(List.of(new Charge(bucket, 3)), this.now, this.wall, this.now);
		assertThat(refused).isEqualTo(new Booking.Refused(bucket, 3 * SECOND));
	}

	/** Redis stamps a charge in its microseconds, the test's nanoseconds / 1,000. */
	@Override
	protected long takenAtNanos(long takenAt) {
		return takenAt * 1_000;
	}

	@Override
	protected QuotaStore createStore() {
		return new RedisQuotaStore(connectionFactory, new RedisQuotaStore.Settings(RedisQuotaStore.OnFailure.REJECT,
				0.25, Duration.ofSeconds(30), Duration.ofSeconds(2)), () -> this.now);
	}

}
