package dev.llmquota.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import dev.llmquota.core.Booking;
import dev.llmquota.core.BucketSpec;

/**
 * The leases this replica holds on shared slots in Redis, renewed every third of the
 * lease time until released: a replica that dies gives its slots back after at most one
 * lease time.
 */
final class RedisLeases {

	/** A key no hold uses, for a last round trip on close. */
	private static final String CLOSING = "llmq:closing";

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

	/**
	 * Returns how many of these leases hold a slot.
	 * @param slot the slot's key
	 * @return the leases holding it
	 */
	int holding(String slot) {
		int held = 0;
		for (Booking.Lease lease : this.leases.values()) {
			for (BucketSpec taken : lease.slots()) {
				if (taken.key().equals(slot)) {
					held++;
				}
			}
		}
		return held;
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

	/**
	 * Releases leases as a replica closes, so its slots are free at once rather than
	 * after the lease time. Shutting down, an answer may take longer than a call's
	 * timeout on a busy machine; a release that has not landed when the connection closes
	 * would keep its slot taken for a whole lease time, so this waits as long as
	 * start-up.
	 */
	static void releaseOnClose(List<Booking.Lease> held, RedisConnection redis) {
		try {
			for (Booking.Lease lease : held) {
				redis.call(QuotaScript.release(lease, redis.time()), RedisConnection.FIRST_ANSWER);
			}
			// Answered after every command sent before it on the connection: releases
			// sent without waiting as the last calls ended have reached Redis too.
			redis.call(QuotaScript.clear(CLOSING, redis.time()), RedisConnection.FIRST_ANSWER);
		}
		catch (RedisConnection.RedisDown ex) {
			// they expire after the lease time
		}
	}

}
