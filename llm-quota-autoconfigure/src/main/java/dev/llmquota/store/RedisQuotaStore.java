package dev.llmquota.store;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.LongFunction;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import dev.llmquota.core.Booking;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.BucketState;
import dev.llmquota.core.Charge;
import dev.llmquota.core.BookingRequest;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.QuotaStore;
import dev.llmquota.core.SharedHold;
import dev.llmquota.core.StoreStatus;
import dev.llmquota.store.RedisConnection.RedisDown;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;

import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;

/**
 * The store shared by many replicas: every bucket, in-flight slot and provider hold in
 * Redis, changed only by {@code quota.lua}, one round trip per operation, on Redis's own
 * clock. Bookings and reads wait for their answer (the engine calls them from its store
 * thread, and the endpoint from its own); corrections, releases and holds are sent
 * without waiting, in order on the one connection.
 * <p>
 * While Redis does not answer, the store either serves calls from local books, each
 * replica taking {@code local-share} of every limit, or refuses them; it looks for Redis
 * again every second and goes back to the shared books as soon as it answers. Leases on
 * shared slots are renewed every third of the lease time, so a replica that dies gives
 * its slots back after at most one lease time; on close a replica releases its leases.
 * <p>
 * Its parts: {@link RedisConnection} runs the script, {@link LocalFallback} keeps the
 * local books, {@link RedisLeases} renews the leases, {@link PendingCorrections} keeps
 * what waits for Redis and {@link RedisMemory} what was last seen of it; this class
 * decides, per operation, which books answer, and sends every correction to the books
 * that charged the booking.
 */
public final class RedisQuotaStore implements QuotaStore {

	private static final Log logger = LogFactory.getLog(RedisQuotaStore.class);

	private static final Duration LOOK_AGAIN = Duration.ofSeconds(1);

	/** What a replica does while Redis does not answer. */
	public enum OnFailure {

		/** Serve calls from local books with a share of each limit. */
		LOCAL,

		/** Refuse calls with {@link dev.llmquota.QuotaStoreUnavailableException}. */
		REJECT

	}

	/**
	 * The store's settings.
	 *
	 * @param onFailure what to do while Redis does not answer
	 * @param localShare the share of each limit one replica uses in local fallback, in
	 * (0, 1]
	 * @param leaseTime how long a shared slot stays taken without renewal
	 * @param timeout the longest wait for one answer from Redis
	 */
	public record Settings(OnFailure onFailure, double localShare, Duration leaseTime, Duration timeout) {

		public Settings {
			if (!(localShare > 0 && localShare <= 1)) {
				throw new IllegalArgumentException("local share must be in (0, 1] but was " + localShare);
			}
			if (leaseTime.isNegative() || leaseTime.isZero() || timeout.isNegative() || timeout.isZero()) {
				throw new IllegalArgumentException("lease time and timeout must be positive");
			}
		}

	}

	private final Settings settings;

	private final RedisConnection redis;

	private final String replica = UUID.randomUUID().toString();

	private final AtomicLong leaseIds = new AtomicLong();

	private final RedisLeases leases;

	private final LocalFallback fallback;

	private final PendingCorrections pending = new PendingCorrections();

	/** Leases of calls booked in Redis that ended while it was down. */
	private final Set<Booking.Lease> releasedWhileDown = ConcurrentHashMap.newKeySet();

	/** Spent quotas, resets, penalties and limits heard while Redis was down. */
	private final SignalsWhileDown signalsWhileDown = new SignalsWhileDown();

	private final RedisMemory memory = new RedisMemory();

	private final ProviderEntries entries;

	private final RedisAvailability availability;

	private final Disposable ticker;

	/**
	 * Creates the store.
	 * @param connectionFactory Spring Boot's reactive Redis connection
	 * @param settings the store's settings
	 */
	public RedisQuotaStore(ReactiveRedisConnectionFactory connectionFactory, Settings settings) {
		this(connectionFactory, settings, null);
	}

	/**
	 * Creates the store for tests.
	 * @param testClock the caller's clock, which the script then runs on instead of
	 * Redis's
	 */
	RedisQuotaStore(ReactiveRedisConnectionFactory connectionFactory, Settings settings, LongSupplier testClock) {
		this.settings = settings;
		this.availability = new RedisAvailability(settings);
		this.redis = new RedisConnection(connectionFactory, settings.timeout(), testClock, this.availability::failed);
		this.leases = new RedisLeases(settings.leaseTime());
		Duration tick = (settings.leaseTime().dividedBy(3).compareTo(LOOK_AGAIN) < 0)
				? settings.leaseTime().dividedBy(3) : LOOK_AGAIN;
		// a replica counts as live for three ticks after it last said so
		this.entries = new ProviderEntries(this.redis, this.availability, this.replica, settings.localShare(),
				tick.multipliedBy(3));
		LocalFallback fallback = new LocalFallback(this.entries::share, this.leases::holding, settings.leaseTime());
		this.fallback = fallback;
		this.availability.judge(this.redis, () -> fallback.startFrom(this.memory.seen()));
		this.redis.loadScript();
		this.ticker = Flux.interval(tick, tick).subscribe((ignored) -> {
			try {
				tick();
			}
			catch (RuntimeException ex) {
				// the next tick tries again; a ticker that stopped would stop renewing
				logger.debug("llm-quota store tick failed", ex);
			}
		});
	}

	/**
	 * This replica's share of a provider entry's limits in fallback, for tests.
	 * @param hashTag the entry's hash tag
	 * @return the share
	 */
	double share(String hashTag) {
		return this.entries.share(hashTag);
	}

	@Override
	public boolean shared() {
		return true;
	}

	@Override
	public Booking book(List<Charge> charges, long now, Instant wallNow, long latestStart) {
		return book(new BookingRequest(charges), now, wallNow, latestStart);
	}

	@Override
	public Booking book(BookingRequest request, long now, Instant wallNow, long latestStart) {
		return book(request, now, wallNow, latestStart, latestStart);
	}

	/**
	 * Books in Redis while it is judged up. An answer later than the connection's
	 * patience has an unknown outcome, not a failed one: the call waits for it until its
	 * deadline while a ping decides whether Redis is down, and goes to the local books
	 * only if it is. A booking that lands after the call stopped waiting is given back,
	 * so a call is never admitted both in Redis and locally.
	 */
	@Override
	public Booking book(BookingRequest request, long now, Instant wallNow, long latestStart, long answerBy) {
		wallNow = this.memory.wall(wallNow);
		if (this.availability.up()) {
			this.redis.awaitWrites();
			String lease = this.replica + ":" + this.leaseIds.incrementAndGet();
			// at least long enough for a ping sent when the answer is late to judge it
			long patience = Math.max(this.redis.patience().multipliedBy(2).toNanos(), answerBy - now);
			CompletableFuture<List<Object>> answer = this.redis.execute(QuotaScript.book(request, this.redis.time(now),
					now, latestStart, lease, this.settings.leaseTime(), wallNow,
					(request.place() != null) ? this.replica + ":" + request.place() : "", this.memory.firstUse()),
					Duration.ofNanos(patience).plus(this.settings.leaseTime()));
			Instant wall = wallNow;
			Booking booking = new BookingAnswer(this.redis, this.availability, answer, (reply) -> {
				this.memory.saw(QuotaScript.levels(reply, request, now, wall));
				return QuotaScript.booking(reply, request, now, wall, lease);
			}).await(patience, request.slots().isEmpty() ? null : new Booking.Lease(lease, request.slots()), (late) -> {
				// the call went without it: Redis gives it all back
				cancel(late, now, wall);
				if (late.lease() != null) {
					release(late.lease());
				}
			});
			if (booking instanceof Booking.Booked booked && booked.lease() != null) {
				this.leases.add(booked.lease());
			}
			if (booking != null) {
				return booking;
			}
		}
		if (this.settings.onFailure() == OnFailure.REJECT) {
			return new Booking.Unavailable("Redis does not answer");
		}
		return this.fallback.book(request, now, wallNow, latestStart);
	}

	@Override
	public long nanosUntilAvailable(BookingRequest request, long now, Instant wallNow) {
		if (request.reserve() == null) {
			return nanosUntilAvailable(request.charges(), now, wallNow);
		}
		Instant wall = this.memory.wall(wallNow);
		return read(() -> QuotaScript.waitNanos(
				this.redis.call(QuotaScript.waitFor(request, this.redis.time(now), wall, this.memory.unused())),
				request.charges(), wall), () -> this.fallback.nanosUntilAvailable(request, now, wall));
	}

	@Override
	public long nanosUntilAvailable(List<Charge> charges, long now, Instant wallNow) {
		Instant wall = this.memory.wall(wallNow);
		return read(
				() -> QuotaScript.waitNanos(
						this.redis.call(QuotaScript.waitFor(charges, this.redis.time(now), wall, this.memory.unused())),
						charges, wall),
				() -> this.fallback.nanosUntilAvailable(new BookingRequest(charges), now, wall));
	}

	/** Reads from Redis while it is judged up and answers, else from the fallback. */
	private <T> T read(Supplier<T> fromRedis, Supplier<T> fromFallback) {
		if (this.availability.up()) {
			this.redis.awaitWrites();
			try {
				return fromRedis.get();
			}
			catch (RedisDown ex) {
				// fall through to the fallback
			}
		}
		return fromFallback.get();
	}

	@Override
	public void cancel(Booking.Booked booking, long now, Instant wallNow) {
		correct(booking, booking.refunds(wallNow), now, wallNow);
	}

	/**
	 * Corrections go to the books that charged the booking: the local fallback's for a
	 * call booked while Redis was down, even once it is back (Redis never charged it);
	 * Redis's for a call booked there, even while it is down (they wait, and land when it
	 * answers again).
	 */
	@Override
	public void correct(Booking.Booked booking, List<Charge> corrections, long now, Instant wallNow) {
		if (corrections.isEmpty()) {
			return;
		}
		// a daily counter's refund goes to the day that charged it: the script refunds no
		// other day (a booking given back when its late answer lands, maybe on the next
		// day, would take that day's calls off); a charge (usage above the estimate)
		// counts on the day it is charged, as the local store counts it
		Instant wall = this.memory.wall(wallNow);
		Instant booked = booking.bookedAt();
		if (booking.fallback()) {
			if (!this.availability.up()) {
				// handed over, net, as Redis answers again
				this.fallback.adjust(corrections, now, wallNow);
				return;
			}
			// Redis was handed what it reserved as it came back: what it used above that
			// is charged there too, as every replica admits on those books; its refunds
			// stay here (Redis keeps the reservation, erring high)
			this.fallback.adjustHandedOver(corrections, now, wallNow);
			List<Charge> charges = corrections.stream().filter((correction) -> correction.units() > 0).toList();
			if (!charges.isEmpty()) {
				this.redis
					.send(QuotaScript.adjust(charges, this.redis.time(now), wall, booked, this.memory.firstUse()));
			}
			return;
		}
		if (this.availability.up()) {
			this.redis
				.send(QuotaScript.adjust(corrections, this.redis.time(now), wall, booked, this.memory.firstUse()));
			return;
		}
		this.pending.add(corrections, wall, booked);
	}

	@Override
	public void adjust(BucketSpec bucket, long units, long now, Instant wallNow) {
		adjust(List.of(new Charge(bucket, units)), now, wallNow);
	}

	@Override
	public void adjust(List<Charge> corrections, long now, Instant wallNow) {
		wallNow = this.memory.wall(wallNow);
		if (this.availability.up()) {
			this.redis.send(QuotaScript.adjust(corrections, this.redis.time(now), wallNow, this.memory.firstUse()));
		}
		else {
			this.fallback.adjust(corrections, now, wallNow);
		}
	}

	@Override
	public void lowerTo(BucketSpec bucket, long maxLevel, long now) {
		if (bucket.daily()) {
			return;
		}
		if (this.availability.up()) {
			this.redis.send(QuotaScript.lower(bucket, maxLevel, this.redis.time(now), this.memory.firstUse()));
		}
		else {
			this.fallback.lowerTo(bucket, maxLevel, now);
		}
	}

	@Override
	public BucketState state(BucketSpec bucket, long now, Instant wallNow) {
		Instant wall = this.memory.wall(wallNow);
		return read(() -> QuotaScript.state(
				this.redis.call(QuotaScript.state(bucket, this.redis.time(now), wall, this.memory.unused())), bucket,
				wall), () -> this.fallback.state(bucket, now, wall));
	}

	/** Redis expires an idle bucket's key by itself; what was seen of it goes now. */
	@Override
	public void forget(List<BucketSpec> buckets) {
		this.memory.forget(buckets);
	}

	@Override
	public void release(Booking.Lease lease) {
		if (LocalFallback.holds(lease)) {
			this.fallback.release(lease);
			return;
		}
		this.leases.remove(lease);
		if (this.availability.up()) {
			this.redis.send(QuotaScript.release(lease, this.redis.time()));
		}
		else {
			// not renewed, it would hold its slots until it expires: released once Redis
			// answers again, as the local books free them at once (or now, if it came
			// back
			// as this looked)
			this.releasedWhileDown.add(lease);
			if (this.availability.up() && this.releasedWhileDown.remove(lease)) {
				this.redis.send(QuotaScript.release(lease, this.redis.time()));
			}
		}
	}

	@Override
	public void penalize(String hold, Dimension dimension, long waitNanos) {
		signal("penalty " + hold + " " + ((dimension != null) ? dimension.id() : ""),
				(waited) -> (waitNanos > waited)
						? QuotaScript.penalize(hold, dimension, waitNanos - waited, this.redis.time()) : null,
				waitNanos);
	}

	@Override
	public void exhaust(String hold, Dimension dimension, String reason, Duration wait, long probeIntervalNanos) {
		signal("exhaustion " + hold, (waited) -> {
			// a reset that passed meanwhile ends it (an unknown one waits for a probe)
			Duration left = (wait != null) ? wait.minusNanos(waited) : null;
			return (left == null || !(left.isNegative() || left.isZero()))
					? QuotaScript.exhaust(hold, dimension, reason, left, probeIntervalNanos, this.redis.time()) : null;
		});
	}

	@Override
	public void clearExhaustion(String hold) {
		signal("exhaustion " + hold, (waited) -> QuotaScript.clear(hold, this.redis.time()));
	}

	/** Redis's word, or none while it is down: then this replica's own holds stand. */
	@Override
	public SharedHold hold(String hold) {
		return read(() -> QuotaScript.held(this.redis.call(QuotaScript.held(hold, this.redis.time()))), () -> null);
	}

	@Override
	public void publishLimit(String key, String field, long limit) {
		signal("limit " + key + " " + field,
				(waited) -> QuotaScript.publishLimit(key, field, limit, this.redis.time()));
	}

	/**
	 * A cluster signal only Redis passes on: sent now, or, while Redis does not answer,
	 * kept (the latest of its key) and sent when it answers again, before the shared
	 * books are used.
	 * @param key what the signal is about
	 * @param call the script call, given the nanoseconds the signal waited
	 */
	private void signal(String key, LongFunction<QuotaScript.Call> call) {
		signal(key, call, -1);
	}

	/**
	 * A cluster signal, as {@link #signal(String, LongFunction)}.
	 * @param key what the signal is about
	 * @param call the script call, given the nanoseconds the signal waited
	 * @param lasting how long it lasts, where of those kept for its key the one that ends
	 * last stands (a penalty); -1 where the latest stands
	 */
	private void signal(String key, LongFunction<QuotaScript.Call> call, long lasting) {
		if (this.availability.up()) {
			// one kept as Redis came back, older, must not follow it
			this.signalsWhileDown.drop(key);
			this.redis.send(call.apply(0));
			return;
		}
		if (lasting >= 0) {
			this.signalsWhileDown.keepLongest(key, this.redis.nanoTime(), lasting, call);
		}
		else {
			this.signalsWhileDown.keepLatest(key, this.redis.nanoTime(), call);
		}
		if (this.availability.up()) {
			// Redis came back as it was kept
			this.signalsWhileDown.sendAll(this.redis.nanoTime(), this.redis::send);
		}
	}

	@Override
	public void watchLimits(String key, BiConsumer<String, Long> listener) {
		this.entries.watch(key, listener);
	}

	@Override
	public boolean isAvailable() {
		return this.availability.up() || this.settings.onFailure() == OnFailure.LOCAL;
	}

	@Override
	public StoreStatus status() {
		Instant since = this.availability.downSince();
		return new StoreStatus("redis", since == null, since != null && this.settings.onFailure() == OnFailure.LOCAL,
				this.availability.fallbacks(), since);
	}

	/**
	 * Releases this replica's leases, so its slots are free at once rather than after the
	 * lease time.
	 */
	@Override
	public void close() {
		if (!this.redis.close()) {
			return;
		}
		this.ticker.dispose();
		List<Booking.Lease> held = this.leases.takeAll();
		if (this.availability.up()) {
			// otherwise they expire after the lease time
			RedisLeases.releaseOnClose(held, this.redis);
		}
	}

	/** Renews leases that are due, or, while Redis is down, looks whether it is back. */
	private void tick() {
		if (!this.availability.up()) {
			this.availability.lookAgain(() -> this.signalsWhileDown.sendAll(this.redis.nanoTime(), this.redis::send),
					() -> {
						// a signal kept as Redis came back
						this.signalsWhileDown.sendAll(this.redis.nanoTime(), this.redis::send);
						this.leases.restore(this.redis);
						for (Booking.Lease lease : this.releasedWhileDown) {
							this.releasedWhileDown.remove(lease);
							this.redis.send(QuotaScript.release(lease, this.redis.time()));
						}
						// what the fallback admitted meanwhile, which Redis never saw
						Instant wall = this.memory.latestWall();
						List<Charge> handed = this.fallback.handOver(wall);
						if (!handed.isEmpty()) {
							this.redis
								.send(QuotaScript.adjust(handed, this.redis.time(), wall, this.memory.firstUse()));
						}
						// what calls booked in Redis used while it was down lands now
						this.pending.drainTo((corrections, wallNow, bookedAt) -> this.redis.send(QuotaScript
							.adjust(corrections, this.redis.time(), wallNow, bookedAt, this.memory.firstUse())));
					});
			return;
		}
		this.entries.tick();
		this.leases.renewIfDue(this.redis);
	}

}
