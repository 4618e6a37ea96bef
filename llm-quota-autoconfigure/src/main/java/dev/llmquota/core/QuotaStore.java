package dev.llmquota.core;

/**
 * Where bucket state lives: its {@link BucketStore bucket arithmetic} and, for a store
 * shared by many processes, its {@link ClusterSignals signals} to the others. A store
 * books a call at the earliest time every bucket allows, so stores shared by many
 * processes keep order with one round trip per admission. Implementations are
 * thread-safe.
 */
public interface QuotaStore extends BucketStore, ClusterSignals, AutoCloseable {

	/**
	 * Returns whether many processes share this store. The engine then calls {@code book}
	 * from one thread of its own, never under a lock, and books calls ahead up to their
	 * deadline, so each admission takes one round trip.
	 * @return whether the store is shared
	 */
	default boolean shared() {
		return false;
	}

	/**
	 * Returns whether the store serves calls: it answers, or a fallback serves while it
	 * does not.
	 * @return whether it is available
	 */
	default boolean isAvailable() {
		return true;
	}

	/**
	 * Returns how the store is doing, for health and metrics.
	 * @return the status
	 */
	default StoreStatus status() {
		return StoreStatus.LOCAL;
	}

	@Override
	default void close() {
	}

}
