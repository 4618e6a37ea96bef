package dev.llmquota.store;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import dev.llmquota.core.Booking;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.Charge;
import dev.llmquota.core.BookingRequest;
import dev.llmquota.core.Dimension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code quota.lua} run directly on a real Redis server, on a clock the test sets (the
 * script's time argument), for what the store contract does not reach: shared slots and
 * their leases, provider holds, key expiry and times as large as the real epoch.
 */
class QuotaScriptTests {

	private static final long SECOND = 1_000_000L;

	private static final ZoneId UTC = ZoneId.of("UTC");

	private static LettuceConnectionFactory connectionFactory;

	private static ReactiveStringRedisTemplate redis;

	@SuppressWarnings("rawtypes")
	private static final RedisScript<List> SCRIPT = RedisScript
		.of(new ClassPathResource("dev/llmquota/store/quota.lua"), List.class);

	private final String prefix = "llmq:{script-" + System.nanoTime() + "}:";

	/** Now, in microseconds of the real epoch, so numbers are as large as Redis's. */
	private long now = Instant.parse("2026-11-30T12:00:00Z").toEpochMilli() * 1000;

	private final Instant wall = Instant.parse("2026-11-30T12:00:00Z");

	/** The epoch keys this test's replica has used, as the Redis store keeps them. */
	private final Set<String> epochs = new HashSet<>();

	@BeforeAll
	static void connect() {
		connectionFactory = EmbeddedRedis.shared().connectionFactory();
		redis = new ReactiveStringRedisTemplate(connectionFactory);
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Test
	void refillKeepsTheFractionalRemainderOfARateThatDoesNotDivideTheMinute() {
		BucketSpec bucket = rate("odd", 7, 7);
		book(request(new Charge(bucket, 7)), -1);
		// 7 per minute: one unit every 8.571... s; three units after 25.714...
		// s, not before
		this.now += 25_714_285;
		assertThat(level(bucket)).isEqualTo(2);
		this.now += 1;
		assertThat(level(bucket)).isEqualTo(3);
	}

	@Test
	void booksAheadOnEveryBucketOfAConjunctionAtTheLatestTimeAnyAllows() {
		BucketSpec requests = rate("requests", 60, 10);
		BucketSpec tokens = rate("tokens", 600, 100);
		book(request(new Charge(tokens, 100)), -1);
		Booking booking = book(request(new Charge(requests, 1), new Charge(tokens, 50)), -1);
		assertThat(booking).isInstanceOf(Booking.Booked.class);
		assertThat(((Booking.Booked) booking).start()).isEqualTo(5 * SECOND * 1000);
		assertThat(level(requests)).as("charged now: it had room").isEqualTo(9);
	}

	@Test
	void aSlotIsLeasedPerCallAndRefusedWhenAllAreTakenUntilTheEarliestLeaseExpires() {
		BucketSpec slot = slot("concurrent", 2);
		assertThat(book(request(List.of(slot)), -1, "a", 30 * SECOND)).isInstanceOf(Booking.Booked.class);
		this.now += 5 * SECOND;
		assertThat(book(request(List.of(slot)), -1, "b", 30 * SECOND)).isInstanceOf(Booking.Booked.class);
		Booking refused = book(request(List.of(slot)), -1, "c", 30 * SECOND);
		assertThat(refused).isEqualTo(new Booking.Refused(slot, 25 * SECOND * 1000));
	}

	@Test
	void aReleasedSlotIsFreeAtOnce() {
		BucketSpec slot = slot("concurrent", 1);
		book(request(List.of(slot)), -1, "a", 30 * SECOND);
		run(QuotaScript.release(new Booking.Lease("a", List.of(slot)), time()));
		assertThat(book(request(List.of(slot)), -1, "b", 30 * SECOND)).isInstanceOf(Booking.Booked.class);
	}

	@Test
	void aLeaseNobodyRenewsExpiresAndItsSlotReturns() {
		BucketSpec slot = slot("concurrent", 1);
		book(request(List.of(slot)), -1, "dead-replica", 30 * SECOND);
		this.now += 30 * SECOND - 1;
		assertThat(book(request(List.of(slot)), -1, "b", 30 * SECOND)).isInstanceOf(Booking.Refused.class);
		this.now += 1;
		assertThat(book(request(List.of(slot)), -1, "b", 30 * SECOND)).isInstanceOf(Booking.Booked.class);
	}

	@Test
	void renewingALeaseKeepsItsSlotButNeverRevivesAnExpiredOne() {
		BucketSpec slot = slot("concurrent", 2);
		Booking.Lease live = new Booking.Lease("live", List.of(slot));
		Booking.Lease lost = new Booking.Lease("lost", List.of(slot));
		book(request(List.of(slot)), -1, "live", 30 * SECOND);
		book(request(List.of(slot)), -1, "lost", 10 * SECOND);
		this.now += 20 * SECOND;
		List<Object> renewed = run(QuotaScript.renew(List.of(live, lost), Duration.ofSeconds(30), time()));
		assertThat(renewed.get(2)).as("leases renewed").isEqualTo(1L);
		this.now += 29 * SECOND;
		assertThat(book(request(List.of(slot)), -1, "c", 30 * SECOND)).isInstanceOf(Booking.Booked.class);
		assertThat(book(request(List.of(slot)), -1, "d", 30 * SECOND)).as("the renewed lease still holds its slot")
			.isInstanceOf(Booking.Refused.class);
	}

	@Test
	void aPenaltyHeardByOneReplicaHoldsEveryBookingUntilItEnds() {
		BucketSpec bucket = rate("tokens", 600, 100);
		String hold = this.prefix + "pool:m:hold";
		run(QuotaScript.penalize(hold, Dimension.TOKENS_PER_MINUTE, 8 * SECOND * 1000, time()));
		BookingRequest request = new BookingRequest(List.of(new Charge(bucket, 10)), List.of(), List.of(hold), null);
		assertThat(book(request, 0))
			.isEqualTo(new Booking.Penalized(hold, Dimension.TOKENS_PER_MINUTE, 8 * SECOND * 1000));
		assertThat(level(bucket)).as("nothing taken").isEqualTo(100);
		Booking ahead = book(request, 10 * SECOND);
		assertThat(((Booking.Booked) ahead).start()).as("booked for the end of the penalty")
			.isEqualTo(8 * SECOND * 1000);
	}

	@Test
	void anExhaustedQuotaRefusesEveryReplicaAndLetsOneProbeThroughPerInterval() {
		BucketSpec bucket = rate("requests", 60, 10);
		String hold = this.prefix + "account:hold";
		run(QuotaScript.exhaust(hold, null, "insufficient_quota", null, 60 * SECOND * 1000, time()));
		BookingRequest request = new BookingRequest(List.of(new Charge(bucket, 1)), List.of(), List.of(hold), null);
		assertThat(book(request, -1)).isEqualTo(new Booking.Exhausted(hold, null, "insufficient_quota", -1));
		this.now += 60 * SECOND;
		Booking probe = book(request, -1);
		assertThat(((Booking.Booked) probe).probe()).isTrue();
		assertThat(book(request, -1)).as("one probe per interval").isInstanceOf(Booking.Exhausted.class);
		run(QuotaScript.clear(hold, time()));
		assertThat(((Booking.Booked) book(request, -1)).probe()).isFalse();
	}

	@Test
	void aProbeRefusedForAnotherReasonIsNotUsedUp() {
		BucketSpec slot = slot("concurrent", 1);
		String hold = this.prefix + "account:hold";
		book(request(List.of(slot)), -1, "busy", 120 * SECOND);
		run(QuotaScript.exhaust(hold, null, "insufficient_quota", null, 60 * SECOND * 1000, time()));
		this.now += 60 * SECOND;
		BookingRequest request = new BookingRequest(List.of(), List.of(slot), List.of(hold), null);
		assertThat(book(request, -1, "probe", 30 * SECOND)).as("no slot for the probe")
			.isInstanceOf(Booking.Refused.class);
		run(QuotaScript.release(new Booking.Lease("busy", List.of(slot)), time()));
		assertThat(((Booking.Booked) book(request, -1, "probe", 30 * SECOND)).probe()).as("the probe is still due")
			.isTrue();
	}

	@Test
	void anExhaustionWithAKnownResetEndsThen() {
		BucketSpec bucket = rate("requests", 60, 10);
		String hold = this.prefix + "pool:m:hold";
		run(QuotaScript.exhaust(hold, Dimension.TOKENS_PER_DAY, "daily tokens", Duration.ofHours(1), 60 * SECOND * 1000,
				time()));
		BookingRequest request = new BookingRequest(List.of(new Charge(bucket, 1)), List.of(), List.of(hold), null);
		assertThat(book(request, -1)).isEqualTo(
				new Booking.Exhausted(hold, Dimension.TOKENS_PER_DAY, "daily tokens", Duration.ofHours(1).toNanos()));
		this.now += 3600 * SECOND;
		assertThat(book(request, -1)).isInstanceOf(Booking.Booked.class);
	}

	/**
	 * A missing key reads as a full bucket: an idle bucket's key outlives an hour, not
	 * just the time it takes to refill under its limits of now. Limits change (learned
	 * from the provider's headers, set by an operator) without a write to the key: under
	 * limits ten times larger, a bucket half full a second ago is not full, and a debt
	 * under lower ones is not paid; a key gone when it would have been full under the old
	 * limits handed out the difference, or forgave the debt.
	 */
	@Test
	void anIdleBucketsKeyOutlivesAnHourOrItsRefillWhicheverIsLonger() {
		BucketSpec bucket = rate("tokens", 600, 100);
		book(request(new Charge(bucket, 50)), -1);
		assertThat(redis.getExpire(bucket.key()).block(Duration.ofSeconds(5)))
			.isBetween(Duration.ofHours(1).minusSeconds(1), Duration.ofHours(1));
		BucketSpec slow = rate("slow", 60, 100_000);
		book(request(new Charge(slow, 100_000)), -1);
		// 100,000 units at one a second: full after 100,000 s; the key lives one second
		// more
		assertThat(redis.getExpire(slow.key()).block(Duration.ofSeconds(5))).isBetween(Duration.ofSeconds(100_000),
				Duration.ofSeconds(100_001));
	}

	/**
	 * An exhaustion whose reset is known (a monthly quota) is kept until then, though the
	 * hold's key is otherwise forgotten after a week, and a penalty written to the hold
	 * later does not shorten it.
	 */
	@Test
	void anExhaustionWithAResetBeyondAWeekIsKeptUntilThen() {
		String hold = this.prefix + "pool:m:hold";
		run(QuotaScript.exhaust(hold, Dimension.BUDGET_PER_MONTH, "monthly budget", Duration.ofDays(20),
				60 * SECOND * 1000, time()));
		// kept a minute beyond its reset
		assertThat(redis.getExpire(hold).block(Duration.ofSeconds(5))).isBetween(Duration.ofDays(20),
				Duration.ofDays(20).plusMinutes(1));
		run(QuotaScript.penalize(hold, Dimension.TOKENS_PER_MINUTE, Duration.ofSeconds(30).toNanos(), time()));
		assertThat(redis.getExpire(hold).block(Duration.ofSeconds(5))).isBetween(Duration.ofDays(20),
				Duration.ofDays(20).plusMinutes(1));
		// one whose reset is sooner than a week: a week, as every hold
		String daily = this.prefix + "pool:d:hold";
		run(QuotaScript.exhaust(daily, Dimension.TOKENS_PER_DAY, "daily tokens", Duration.ofHours(1),
				60 * SECOND * 1000, time()));
		assertThat(redis.getExpire(daily).block(Duration.ofSeconds(5))).isBetween(Duration.ofDays(7).minusMinutes(1),
				Duration.ofDays(7));
	}

	@Test
	void aDailyCounterRefusalNamesTheStoredDay() {
		BucketSpec day = new BucketSpec(this.prefix + "account:requests-per-day", BucketSpec.Scope.ACCOUNT,
				Dimension.REQUESTS_PER_DAY, 1, 1, UTC);
		book(request(new Charge(day, 1)), -1);
		Booking refused = book(request(new Charge(day, 1)), -1);
		assertThat(refused).isEqualTo(new Booking.Refused(day, Duration.ofHours(12).toNanos()));
	}

	@Test
	void aRefundForAnEarlierDayLeavesACounterOfALaterDayAlone() {
		BucketSpec day = new BucketSpec(this.prefix + "account:tokens-per-day", BucketSpec.Scope.ACCOUNT,
				Dimension.TOKENS_PER_DAY, 1_000, 1_000, UTC);
		// a replica whose clock is ahead charged the next day
		java.time.Instant tomorrow = this.wall.plus(Duration.ofDays(1));
		run(QuotaScript.adjust(List.of(new Charge(day, 300)), time(), tomorrow, this.epochs::add));
		// this replica refunds a call it booked today
		run(QuotaScript.adjust(List.of(new Charge(day, -200)), time(), this.wall, this.epochs::add));
		assertThat(QuotaScript
			.state(run(QuotaScript.state(day, time(), tomorrow, (epoch) -> !this.epochs.contains(epoch))), day,
					tomorrow)
			.remaining()).isEqualTo(1_000 - 300);
	}

	@Test
	void booksLostWithTheirEpochStartEmptyAtTheLossAndRefillAtTheirRate() {
		BucketSpec bucket = rate("lost", 60, 10);
		book(request(new Charge(bucket, 4)), -1);
		loseEverything();
		// the books were full a moment ago to Redis, and this replica spent them: the
		// bucket is empty at the loss, one unit a second from then
		Booking booking = book(request(new Charge(bucket, 3)), -1);
		assertThat(((Booking.Booked) booking).start()).isEqualTo(3 * SECOND * 1000);
		this.now += 20 * SECOND;
		assertThat(book(request(new Charge(bucket, 10)), -1)).as("a window after the loss the bucket is full")
			.isEqualTo(new Booking.Booked(0, this.wall, List.of(new Charge(bucket, 10, this.now))));
	}

	@Test
	void aCorrectionAfterTheLossDoesNotRecreateAFullBucket() {
		BucketSpec bucket = rate("corrected", 60, 10);
		book(request(new Charge(bucket, 4)), -1);
		loseEverything();
		run(QuotaScript.adjust(List.of(new Charge(bucket, 2)), time(), this.wall, this.epochs::add));
		assertThat(level(bucket)).as("empty at the loss, then charged 2").isEqualTo(-2);
	}

	@Test
	void aBucketThatExpiredIdleComesBackFull() {
		BucketSpec bucket = rate("idle", 60, 10);
		book(request(new Charge(bucket, 4)), -1);
		this.now += 10 * SECOND;
		redis.delete(bucket.key()).block(Duration.ofSeconds(5));
		assertThat(book(request(new Charge(bucket, 10)), -1))
			.isEqualTo(new Booking.Booked(0, this.wall, List.of(new Charge(bucket, 10, this.now))));
	}

	@Test
	void aReplicaNewToBooksWithNoEpochTakesThemAsNew() {
		BucketSpec bucket = rate("new", 60, 10);
		assertThat(book(request(new Charge(bucket, 10)), -1))
			.isEqualTo(new Booking.Booked(0, this.wall, List.of(new Charge(bucket, 10, this.now))));
		assertThat(redis.opsForValue().get(QuotaScript.epochKey(bucket.key())).block(Duration.ofSeconds(5)))
			.isEqualTo("0");
	}

	/** Every key of this test's provider entry is gone, as after a restart. */
	private void loseEverything() {
		redis.keys(this.prefix.replace("{", "\\{").replace("}", "\\}") + "*")
			.concatWith(reactor.core.publisher.Flux.just(QuotaScript.epochKey(this.prefix)))
			.flatMap(redis::delete)
			.blockLast(Duration.ofSeconds(5));
	}

	private BucketSpec rate(String name, long perMinute, long capacity) {
		return new BucketSpec(this.prefix + "pool:m:" + name, BucketSpec.Scope.POOL, Dimension.TOKENS_PER_MINUTE,
				perMinute, capacity, UTC);
	}

	private BucketSpec slot(String name, long limit) {
		return new BucketSpec(this.prefix + "account:" + name, BucketSpec.Scope.ACCOUNT, Dimension.CONCURRENT_REQUESTS,
				limit, limit, UTC);
	}

	private static BookingRequest request(Charge... charges) {
		return new BookingRequest(List.of(charges));
	}

	private static BookingRequest request(List<BucketSpec> slots) {
		return new BookingRequest(List.of(), slots, List.of(), null);
	}

	/** Books with the latest start in microseconds from now (-1: any). */
	private Booking book(BookingRequest request, long latestMicros) {
		return book(request, latestMicros, "lease", 30 * SECOND);
	}

	private Booking book(BookingRequest request, long latestMicros, String lease, long leaseMicros) {
		// The caller's nanoseconds are 0 at the script's now, so starts read as offsets.
		long latest = (latestMicros < 0) ? Long.MAX_VALUE : latestMicros * 1000;
		return QuotaScript.booking(
				run(QuotaScript.book(request, time(), 0, latest, lease, Duration.ofNanos(leaseMicros * 1000), this.wall,
						(request.place() != null) ? request.place() : "", this.epochs::add)),
				request, 0, this.wall, lease);
	}

	private long level(BucketSpec bucket) {
		return QuotaScript
			.state(run(QuotaScript.state(bucket, time(), this.wall, (epoch) -> !this.epochs.contains(epoch))), bucket,
					this.wall)
			.remaining();
	}

	private String time() {
		return Long.toString(this.now);
	}

	@SuppressWarnings("unchecked")
	private static List<Object> run(QuotaScript.Call call) {
		return (List<Object>) redis.execute(SCRIPT, call.keys(), call.args()).next().block(Duration.ofSeconds(5));
	}

}
