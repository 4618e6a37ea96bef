package dev.llmquota.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import dev.llmquota.core.Booking;

/**
 * The leases this replica holds on shared slots in Redis, renewed every third of the
 * lease time until released: a replica that dies gives its slots back after at most one
 * lease time.
 */
final class RedisLeases {

	private final Map<String, Booking.Lease> leases = new ConcurrentHashMap<>();

	private final Duration leaseTime;

	private volatile long lastRenewal = System.nanoTime();

	RedisLeases(Duration leaseTime) {
		this.leaseTime = leaseTime;
	}

	void add(Booking.Lease lease) {
		this.leases.put(lease.id(), lease);
	}

	void remove(Booking.Lease lease) {
		this.leases.remove(lease.id());
	}

	/** Takes every lease off the books, to release them at once. */
	List<Booking.Lease> takeAll() {
		List<Booking.Lease> held = new ArrayList<>(this.leases.values());
		this.leases.clear();
		return held;
	}

	/**
	 * Renews the leases if a third of the lease time has passed since the last renewal.
	 */
	void renewIfDue(RedisConnection connection) {
		long now = System.nanoTime();
		if (now - this.lastRenewal < this.leaseTime.toNanos() / 3 || this.leases.isEmpty()) {
			return;
		}
		this.lastRenewal = now;
		byEntry().forEach((leases) -> connection.send(QuotaScript.renew(leases, this.leaseTime, connection.time())));
	}

	/** Takes back the leases of calls still running, in a Redis that answers again. */
	void restore(RedisConnection connection) {
		byEntry().forEach((leases) -> connection.send(QuotaScript.restore(leases, this.leaseTime, connection.time())));
	}

	/**
	 * One script per provider entry: a script may touch keys of one Cluster slot only.
	 */
	private Collection<List<Booking.Lease>> byEntry() {
		return this.leases.values()
			.stream()
			.collect(Collectors.groupingBy((lease) -> QuotaScript.hashTag(lease.slots().get(0).key())))
			.values();
	}

}
