package dev.llmquota.store;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.LongFunction;

/**
 * Cluster signals this replica heard while Redis did not answer (a spent quota, an
 * operator's reset of one, a provider's penalty, a limit published): only Redis tells the
 * other replicas, so each is sent when it answers again, before the shared books are
 * used. The latest spent quota or reset of a hold stands (a reset after a spent quota
 * ends it; a spent quota after a reset holds again), and the latest limit; of a hold's
 * penalties on one dimension, the one that ends last (Redis keeps the later end too). A
 * wait is shortened by the time it waited: one that ended meanwhile is not sent.
 */
final class SignalsWhileDown {

	private final Map<String, Signal> signals = new ConcurrentHashMap<>();

	/**
	 * Keeps a signal, in place of the one before under the same key.
	 * @param key what the signal is about: its kind and its hold or limit
	 * @param heardAt the monotonic time it was heard
	 * @param call the script call that tells Redis, given the nanoseconds since it was
	 * heard; {@code null} if nothing is left to tell
	 */
	void keepLatest(String key, long heardAt, LongFunction<QuotaScript.Call> call) {
		this.signals.put(key, new Signal(heardAt, Long.MIN_VALUE, call));
	}

	/**
	 * Keeps a signal that lasts a while, unless the one kept under the same key ends
	 * later.
	 * @param key what the signal is about
	 * @param heardAt the monotonic time it was heard
	 * @param waitNanos how long it lasts from then
	 * @param call as for {@link #keepLatest}
	 */
	void keepLongest(String key, long heardAt, long waitNanos, LongFunction<QuotaScript.Call> call) {
		long end = heardAt + Math.max(0, waitNanos);
		this.signals.merge(key, new Signal(heardAt, end, call), (kept, heard) -> (kept.end() > end) ? kept : heard);
	}

	/**
	 * Forgets what is kept under a key: a newer signal of it reached Redis.
	 * @param key the key
	 */
	void drop(String key) {
		if (!this.signals.isEmpty()) {
			this.signals.remove(key);
		}
	}

	/**
	 * Sends every kept signal, each once.
	 * @param now the monotonic time
	 * @param send where the script calls go
	 */
	void sendAll(long now, Consumer<QuotaScript.Call> send) {
		for (String key : this.signals.keySet()) {
			Signal signal = this.signals.remove(key);
			if (signal != null) {
				QuotaScript.Call call = signal.call().apply(Math.max(0, now - signal.heardAt()));
				if (call != null) {
					send.accept(call);
				}
			}
		}
	}

	/**
	 * @param end when it ends, for a signal that lasts; {@link Long#MIN_VALUE} otherwise
	 */
	private record Signal(long heardAt, long end, LongFunction<QuotaScript.Call> call) {

	}

}
