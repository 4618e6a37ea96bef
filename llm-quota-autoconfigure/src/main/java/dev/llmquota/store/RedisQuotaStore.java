package dev.llmquota.store;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;

import dev.llmquota.core.Booking;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.BucketState;
import dev.llmquota.core.Charge;
import dev.llmquota.core.Claim;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.QuotaStore;
import dev.llmquota.core.StoreStatus;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.ClassPathResource;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

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
 */
public final class RedisQuotaStore implements QuotaStore {

	private static final Log logger = LogFactory.getLog(RedisQuotaStore.class);

	@SuppressWarnings("rawtypes")
	private static final RedisScript<List> SCRIPT = RedisScript
		.of(new ClassPathResource("dev/llmquota/store/quota.lua"), List.class);

	private static final Duration LOOK_AGAIN = Duration.ofSeconds(1);

	/** The longest wait for Redis at start-up, when the connection opens. */
	private static final Duration FIRST_ANSWER = Duration.ofSeconds(5);

	/** A key no hold uses, for a last round trip on close. */
	private static final String CLOSING = "llmq:closing";

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

	private final ReactiveStringRedisTemplate redis;

	private final Settings settings;

	/**
	 * Tests only: the caller's clock, in nanoseconds, which the script then runs on
	 * instead of Redis's; {@code null} in production.
	 */
	private final LongSupplier testClock;

	private final String replica = UUID.randomUUID().toString();

	private final AtomicLong leaseIds = new AtomicLong();

	/** Leases this replica holds in Redis, renewed until released. */
	private final Map<String, Booking.Lease> leases = new ConcurrentHashMap<>();

	private final LocalQuotaStore fallback = new LocalQuotaStore();

	private final AtomicReference<Instant> latestWall = new AtomicReference<>(Instant.MIN);

	/** How many corrections of Redis bookings wait for Redis to answer again, at most. */
	private static final int MAX_PENDING = 100_000;

	/** Corrections of Redis bookings made while it did not answer, in order. */
	private final Queue<Pending> pending = new ConcurrentLinkedQueue<>();

	private final AtomicBoolean pendingDropped = new AtomicBoolean();

	/** Writes sent and not yet answered. */
	private final Set<CompletableFuture<List<Object>>> writes = ConcurrentHashMap.newKeySet();

	/** Limits changed at run time that this replica follows, by key. */
	private final Map<String, LimitWatch> limitWatches = new ConcurrentHashMap<>();

	/** Slots taken in local fallback, by key. */
	private final Map<String, AtomicInteger> localSlots = new ConcurrentHashMap<>();

	private final AtomicLong fallbacks = new AtomicLong();

	private volatile Instant downSince;

	private final AtomicBoolean closed = new AtomicBoolean();

	private final AtomicBoolean confirming = new AtomicBoolean();

	private volatile long lastRenewal = System.nanoTime();

	private final Disposable ticker;

	/**
	 * Creates the store.
	 * @param connectionFactory Spring Boot's reactive Redis connection
	 * @param settings the store's settings
	 */
	public RedisQuotaStore(ReactiveRedisConnectionFactory connectionFactory, Settings settings) {
		this(connectionFactory, settings, null);
	}

	RedisQuotaStore(ReactiveRedisConnectionFactory connectionFactory, Settings settings, LongSupplier testClock) {
		this.redis = new ReactiveStringRedisTemplate(connectionFactory);
		this.settings = settings;
		this.testClock = testClock;
		loadScript();
		Duration tick = (settings.leaseTime().dividedBy(3).compareTo(LOOK_AGAIN) < 0)
				? settings.leaseTime().dividedBy(3) : LOOK_AGAIN;
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

	@Override
	public boolean shared() {
		return true;
	}

	@Override
	public Booking book(List<Charge> charges, long now, Instant wallNow, long latestStart) {
		return book(new Claim(charges), now, wallNow, latestStart);
	}

	@Override
	public Booking book(Claim claim, long now, Instant wallNow, long latestStart) {
		wallNow = wall(wallNow);
		if (this.downSince == null) {
			awaitWrites();
			String lease = this.replica + ":" + this.leaseIds.incrementAndGet();
			try {
				Booking booking = QuotaScript.booking(call(QuotaScript.book(claim, time(now), now, latestStart, lease,
						this.settings.leaseTime(), wallNow)), claim, now, wallNow, lease);
				if (booking instanceof Booking.Booked booked && booked.lease() != null) {
					this.leases.put(lease, booked.lease());
				}
				return booking;
			}
			catch (RedisDown ex) {
				// The script may have run all the same: its slots must not stay taken
				// until the lease expires (its units stay charged: never under-counted).
				if (!claim.slots().isEmpty()) {
					send(QuotaScript.release(new Booking.Lease(lease, claim.slots()), time()));
				}
			}
		}
		if (this.settings.onFailure() == OnFailure.REJECT) {
			return new Booking.Unavailable("Redis does not answer");
		}
		return bookLocally(claim, now, wallNow, latestStart);
	}

	@Override
	public long nanosUntilAvailable(List<Charge> charges, long now, Instant wallNow) {
		wallNow = wall(wallNow);
		if (this.downSince == null) {
			awaitWrites();
			try {
				return QuotaScript.waitNanos(call(QuotaScript.waitFor(charges, time(now), wallNow)), charges, wallNow);
			}
			catch (RedisDown ex) {
				// fall through to the fallback
			}
		}
		return this.fallback.nanosUntilAvailable(scaled(charges), now, wallNow);
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
		if (booking.fallback()) {
			this.fallback.adjust(scaled(corrections), now, wallNow);
			return;
		}
		Instant wall = wall(wallNow);
		if (this.downSince == null) {
			send(QuotaScript.adjust(corrections, time(now), wall));
			return;
		}
		if (this.pending.size() < MAX_PENDING) {
			this.pending.add(new Pending(corrections, wall));
		}
		else if (this.pendingDropped.compareAndSet(false, true)) {
			logger.warn("Redis has not answered for a while: llm-quota keeps no more than " + MAX_PENDING
					+ " corrections for it, and drops later ones until it is back (refunds lost keep the books"
					+ " above the provider's; charges lost are taken back by its rate-limit headers)");
		}
	}

	@Override
	public void adjust(BucketSpec bucket, long units, long now, Instant wallNow) {
		adjust(List.of(new Charge(bucket, units)), now, wallNow);
	}

	@Override
	public void adjust(List<Charge> corrections, long now, Instant wallNow) {
		wallNow = wall(wallNow);
		if (this.downSince == null) {
			send(QuotaScript.adjust(corrections, time(now), wallNow));
		}
		else {
			this.fallback.adjust(scaled(corrections), now, wallNow);
		}
	}

	@Override
	public void lowerTo(BucketSpec bucket, long maxLevel, long now) {
		if (bucket.daily()) {
			return;
		}
		if (this.downSince == null) {
			send(QuotaScript.lower(bucket, maxLevel, time(now)));
		}
		else {
			this.fallback.lowerTo(scaled(bucket), (long) Math.floor(maxLevel * this.settings.localShare()), now);
		}
	}

	@Override
	public BucketState state(BucketSpec bucket, long now, Instant wallNow) {
		wallNow = wall(wallNow);
		if (this.downSince == null) {
			awaitWrites();
			try {
				return QuotaScript.state(call(QuotaScript.state(bucket, time(now), wallNow)), bucket, wallNow);
			}
			catch (RedisDown ex) {
				// fall through to the fallback
			}
		}
		return this.fallback.state(scaled(bucket), now, wallNow);
	}

	@Override
	public void release(Booking.Lease lease) {
		if (lease.id().startsWith("local:")) {
			lease.slots().forEach((slot) -> this.localSlots.get(slot.key()).decrementAndGet());
			return;
		}
		this.leases.remove(lease.id());
		if (this.downSince == null) {
			send(QuotaScript.release(lease, time()));
		}
	}

	@Override
	public void penalize(String hold, Dimension dimension, long waitNanos) {
		if (this.downSince == null) {
			send(QuotaScript.penalize(hold, dimension, waitNanos, time()));
		}
	}

	@Override
	public void exhaust(String hold, Dimension dimension, String reason, Instant until, long probeIntervalNanos) {
		if (this.downSince == null) {
			send(QuotaScript.exhaust(hold, dimension, reason, until, probeIntervalNanos, time()));
		}
	}

	@Override
	public void clearExhaustion(String hold) {
		if (this.downSince == null) {
			send(QuotaScript.clear(hold, time()));
		}
	}

	@Override
	public void publishLimit(String key, String field, long limit) {
		if (this.downSince == null) {
			send(QuotaScript.publishLimit(key, field, limit, time()));
		}
	}

	@Override
	public void watchLimits(String key, BiConsumer<String, Long> listener) {
		this.limitWatches.put(key, new LimitWatch(listener));
		readLimits(key, this.limitWatches.get(key));
	}

	@Override
	public boolean isAvailable() {
		return this.downSince == null || this.settings.onFailure() == OnFailure.LOCAL;
	}

	@Override
	public StoreStatus status() {
		Instant since = this.downSince;
		return new StoreStatus("redis", since == null, since != null && this.settings.onFailure() == OnFailure.LOCAL,
				this.fallbacks.get(), since);
	}

	/**
	 * Releases this replica's leases, so its slots are free at once rather than after the
	 * lease time.
	 */
	@Override
	public void close() {
		if (!this.closed.compareAndSet(false, true)) {
			return;
		}
		this.ticker.dispose();
		List<Booking.Lease> held = new ArrayList<>(this.leases.values());
		this.leases.clear();
		if (this.downSince != null) {
			// they expire after the lease time
			return;
		}
		try {
			// Shutting down, an answer may take longer than a call's timeout on a busy
			// machine; a release that has not landed when the connection closes would
			// keep its slot taken for a whole lease time, so closing waits as long as
			// start-up.
			for (Booking.Lease lease : held) {
				call(QuotaScript.release(lease, time()), FIRST_ANSWER);
			}
			// Answered after every command sent before it on the connection: releases
			// sent without waiting as the last calls ended have reached Redis too.
			call(QuotaScript.clear(CLOSING, time()), FIRST_ANSWER);
		}
		catch (RedisDown ex) {
			// they expire after the lease time
		}
	}

	/** Renews leases that are due, or, while Redis is down, looks whether it is back. */
	private void tick() {
		if (this.downSince != null) {
			Flux.defer(() -> this.redis.execute((connection) -> connection.ping()))
				.next()
				.timeout(this.settings.timeout())
				.subscribe((pong) -> recovered(), (error) -> {
				});
			return;
		}
		this.limitWatches.forEach(this::readLimits);
		long now = System.nanoTime();
		if (now - this.lastRenewal < this.settings.leaseTime().toNanos() / 3 || this.leases.isEmpty()) {
			return;
		}
		this.lastRenewal = now;
		// One script per provider entry: a script may touch keys of one Cluster slot
		// only.
		Map<String, List<Booking.Lease>> byEntry = this.leases.values()
			.stream()
			.collect(Collectors.groupingBy((lease) -> QuotaScript.hashTag(lease.slots().get(0).key())));
		byEntry.values().forEach((leases) -> send(QuotaScript.renew(leases, this.settings.leaseTime(), time())));
	}

	/**
	 * Reads a provider entry's changed limits and tells its listener of a new version.
	 */
	private void readLimits(String key, LimitWatch watch) {
		if (this.closed.get() || this.downSince != null) {
			return;
		}
		execute(QuotaScript.limits(key, time())).whenComplete((reply, error) -> {
			if (error != null) {
				failed(error);
				return;
			}
			Map<String, Long> limits = QuotaScript.limits(reply);
			Long version = limits.remove("v");
			if (version != null && watch.version.getAndSet(version) != version) {
				try {
					limits.forEach(watch.listener);
				}
				catch (RuntimeException ex) {
					// the engine's failure, not Redis's
					logger.warn("llm-quota could not apply limits changed at run time", ex);
				}
			}
		});
	}

	private Booking bookLocally(Claim claim, long now, Instant wallNow, long latestStart) {
		for (BucketSpec slot : claim.slots()) {
			AtomicInteger taken = this.localSlots.computeIfAbsent(slot.key(), (key) -> new AtomicInteger());
			if (taken.get() >= shareOf(slot.enforced())) {
				return new Booking.Refused(slot, this.settings.leaseTime().toNanos());
			}
		}
		Booking booking = this.fallback.book(scaled(claim.charges()), now, wallNow, latestStart);
		if (!(booking instanceof Booking.Booked booked)) {
			return booking;
		}
		claim.slots().forEach((slot) -> this.localSlots.get(slot.key()).incrementAndGet());
		Booking.Lease lease = claim.slots().isEmpty() ? null
				: new Booking.Lease("local:" + this.leaseIds.incrementAndGet(), List.copyOf(claim.slots()));
		// the caller keeps the real buckets: corrections after Redis is back go there
		return new Booking.Booked(booked.start(), booked.bookedAt(), List.copyOf(claim.charges()), lease, false, true);
	}

	private List<Object> call(QuotaScript.Call call) {
		return call(call, this.settings.timeout().multipliedBy(2));
	}

	private List<Object> call(QuotaScript.Call call, Duration patience) {
		try {
			return execute(call, patience).get(patience.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new RedisDown();
		}
		catch (ExecutionException | TimeoutException ex) {
			failed((ex.getCause() != null) ? ex.getCause() : ex);
			throw new RedisDown();
		}
	}

	private void send(QuotaScript.Call call) {
		if (this.closed.get()) {
			// shutting down: the leases were released on close
			return;
		}
		CompletableFuture<List<Object>> write = execute(call);
		this.writes.add(write);
		write.whenComplete((reply, error) -> this.writes.remove(write));
		write.exceptionally((error) -> {
			failed(error);
			return null;
		});
	}

	/**
	 * Waits for the writes sent so far (releases, refunds, corrections) to land before a
	 * read or a booking: a slot released or a refund given here must be seen by the next
	 * booking, whichever connection each goes out on. Runs on the engine's store thread
	 * or a caller that reads, never on a thread that ends a call.
	 */
	private void awaitWrites() {
		for (CompletableFuture<List<Object>> write : List.copyOf(this.writes)) {
			try {
				write.get(this.settings.timeout().toNanos(), TimeUnit.NANOSECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			catch (ExecutionException | TimeoutException ex) {
				// its failure is handled where it was sent
			}
		}
	}

	/** Runs the script; its reply is one list (the multi-bulk reply of EVALSHA). */
	private CompletableFuture<List<Object>> execute(QuotaScript.Call call) {
		return execute(call, this.settings.timeout());
	}

	@SuppressWarnings("unchecked")
	private CompletableFuture<List<Object>> execute(QuotaScript.Call call, Duration timeout) {
		// deferred: a connection that cannot even be asked fails the future, not the
		// caller
		return Flux.defer(() -> this.redis.execute(SCRIPT, call.keys(), call.args()))
			.next()
			.map((reply) -> (List<Object>) reply)
			.timeout(timeout)
			.toFuture();
	}

	/**
	 * Loads the script at start-up, when the first command also opens the connection: it
	 * may take longer than one answer should, so it gets {@link #FIRST_ANSWER}.
	 */
	private void loadScript() {
		try {
			scriptLoad(FIRST_ANSWER.compareTo(this.settings.timeout()) > 0 ? FIRST_ANSWER : this.settings.timeout())
				.onErrorResume((error) -> {
					failed(error);
					return Mono.empty();
				})
				.toFuture()
				.get();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException ex) {
			failed(ex.getCause());
		}
	}

	private Mono<String> scriptLoad(Duration timeout) {
		return Flux
			.defer(() -> this.redis.execute((connection) -> connection.scriptingCommands()
				.scriptLoad(ByteBuffer.wrap(SCRIPT.getScriptAsString().getBytes(StandardCharsets.UTF_8)))))
			.next()
			.timeout(timeout);
	}

	/**
	 * Takes a failed answer: an error of the connection means Redis is down; a slow
	 * answer may be a pause, so a ping decides.
	 */
	private void failed(Throwable error) {
		if (this.downSince != null || this.closed.get()) {
			return;
		}
		if (error instanceof TimeoutException || error instanceof QueryTimeoutException) {
			if (this.confirming.compareAndSet(false, true)) {
				Flux.defer(() -> this.redis.execute((connection) -> connection.ping()))
					.next()
					.timeout(this.settings.timeout())
					.doFinally((signal) -> this.confirming.set(false))
					.subscribe((pong) -> {
					}, (ignored) -> down(error));
			}
			return;
		}
		down(error);
	}

	private void down(Throwable error) {
		synchronized (this) {
			if (this.downSince != null) {
				return;
			}
			this.downSince = Instant.now();
			this.fallbacks.incrementAndGet();
		}
		if (this.settings.onFailure() == OnFailure.LOCAL) {
			logger.warn("Redis does not answer (" + error + "); llm-quota goes on with local books, this replica"
					+ " taking llm.quota.redis.local-share=" + this.settings.localShare()
					+ " of each limit, until Redis answers again");
		}
		else {
			logger.error("Redis does not answer (" + error + "); llm-quota refuses calls"
					+ " (llm.quota.redis.on-failure=reject) until Redis answers again");
		}
	}

	/**
	 * Redis answers a ping again: load the script (a restarted server has none), take
	 * back the leases of calls still running, and return to the shared books. Runs on
	 * Lettuce's thread, so nothing here waits for an answer.
	 */
	private void recovered() {
		if (this.downSince == null || !this.confirming.compareAndSet(false, true)) {
			return;
		}
		scriptLoad(this.settings.timeout()).doFinally((signal) -> this.confirming.set(false)).subscribe((sha) -> {
			Map<String, List<Booking.Lease>> byEntry = this.leases.values()
				.stream()
				.collect(Collectors.groupingBy((lease) -> QuotaScript.hashTag(lease.slots().get(0).key())));
			this.downSince = null;
			byEntry.values().forEach((leases) -> send(QuotaScript.restore(leases, this.settings.leaseTime(), time())));
			// what calls booked in Redis used while it was down lands now
			Pending correction;
			while ((correction = this.pending.poll()) != null) {
				send(QuotaScript.adjust(correction.corrections(), time(), correction.wallNow()));
			}
			this.pendingDropped.set(false);
			logger.info("Redis answers again; llm-quota is back on the shared books");
		}, (error) -> {
			// still down: the next tick pings again
		});
	}

	/**
	 * The wall time for calendar days, never earlier than any this store was given: a
	 * wall clock set back across midnight must not open a new count of a day already
	 * counted, as the local store's counters never do.
	 */
	private Instant wall(Instant wallNow) {
		return this.latestWall.accumulateAndGet(wallNow, (seen, given) -> given.isAfter(seen) ? given : seen);
	}

	/** The script's time argument for an operation at the caller's {@code now}. */
	private String time(long now) {
		return QuotaScript.time((this.testClock != null) ? now : null);
	}

	/** The script's time argument for an operation the caller gives no time. */
	private String time() {
		return QuotaScript.time((this.testClock != null) ? this.testClock.getAsLong() : null);
	}

	private long shareOf(long enforced) {
		return Math.max(1, (long) Math.floor(enforced * this.settings.localShare()));
	}

	private List<Charge> scaled(List<Charge> charges) {
		List<Charge> scaled = new ArrayList<>(charges.size());
		for (Charge charge : charges) {
			scaled.add(new Charge(scaled(charge.bucket()), charge.units()));
		}
		return scaled;
	}

	private BucketSpec scaled(BucketSpec bucket) {
		return new BucketSpec(bucket.key(), bucket.scope(), bucket.dimension(), shareOf(bucket.enforced()),
				shareOf(bucket.capacity()), bucket.zone());
	}

	/** A provider entry's limits changed at run time, and the version last applied. */
	/** A correction of a Redis booking waiting for Redis. */
	private record Pending(List<Charge> corrections, Instant wallNow) {

	}

	private record LimitWatch(BiConsumer<String, Long> listener, AtomicLong version) {

		LimitWatch(BiConsumer<String, Long> listener) {
			this(listener, new AtomicLong(-1));
		}

	}

	/** Redis did not answer in time; the caller falls back. */
	private static final class RedisDown extends RuntimeException {

		RedisDown() {
			super(null, null, false, false);
		}

	}

}
