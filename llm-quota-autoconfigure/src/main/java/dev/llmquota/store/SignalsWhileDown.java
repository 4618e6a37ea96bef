package dev.llmquota.store;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.LongFunction;

/**
 * Cluster signals this replica heard while Redis did not answer (a spent quota, an
 * operator's reset of one, a provider's penalty, a limit published): only Redis tells the
 * other replicas, so each is sent when it answers again, before the shared books are
 * used. The latest signal of each kind per hold or limit stands (a reset after a spent
 * quota ends it; a spent quota after a reset holds again), and a wait is shortened by the
 * time it waited: one that ended meanwhile is not sent.
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
	void keep(String key, long heardAt, LongFunction<QuotaScript.Call> call) {
		this.signals.put(key, new Signal(heardAt, call));
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

	private record Signal(long heardAt, LongFunction<QuotaScript.Call> call) {

	}

}
