package dev.llmquota.core;

import java.util.ArrayDeque;
import java.util.List;

/**
 * Admissions and failures told to their callers outside the admission lock, on the thread
 * that produced them.
 */
final class Signals {

	/**
	 * Signals produced on this thread while it is already signalling (see emit); empty
	 * and removed once the outermost signal returns.
	 */
	private static final ThreadLocal<ArrayDeque<Runnable>> pending = new ThreadLocal<>();

	private Signals() {
	}

	/**
	 * Signals admissions and failures outside the lock, on the thread that produced them:
	 * a caller that ends its call inside the signal releases its slot, which admits the
	 * next waiter; that signal is queued on this thread instead of recursing, so a long
	 * queue cannot overflow the stack, and no signal is deferred to another thread that
	 * the caller's subscriber does not expect.
	 */
	static void emit(List<Runnable> after) {
		if (after.isEmpty()) {
			return;
		}
		ArrayDeque<Runnable> queued = pending.get();
		if (queued != null) {
			queued.addAll(after);
			return;
		}
		queued = new ArrayDeque<>(after);
		pending.set(queued);
		try {
			Runnable signal;
			while ((signal = queued.poll()) != null) {
				try {
					signal.run();
				}
				catch (RuntimeException ex) {
					// A subscriber's failure must not stop the signals of other callers.
					Thread.currentThread().getUncaughtExceptionHandler().uncaughtException(Thread.currentThread(), ex);
				}
			}
		}
		finally {
			pending.remove();
		}
	}

}
