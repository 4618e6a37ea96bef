package dev.llmquota.core;

import java.util.ArrayDeque;
import java.util.List;

/**
 * Admissions and failures told to their callers outside the admission lock, on the thread
 * that produced them.
 */
final class Signals {

	/**
	 * Each thread's signalling: whether it is signalling now, and the signals produced on
	 * it meanwhile (see emit). Made once a thread and reused, so a call's signal
	 * allocates nothing.
	 */
	private static final ThreadLocal<Signalling> signalling = ThreadLocal.withInitial(Signalling::new);

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
		Signalling thread = signalling.get();
		if (thread.running) {
			thread.pending.addAll(after);
			thread.grown |= thread.pending.size() > Signalling.KEPT;
			return;
		}
		thread.running = true;
		try {
			for (int i = 0; i < after.size(); i++) {
				run(after.get(i));
			}
			Runnable signal;
			while ((signal = thread.pending.poll()) != null) {
				run(signal);
			}
		}
		finally {
			thread.pending.clear();
			if (thread.grown) {
				// a burst's queue is not kept for the life of the thread
				thread.pending = new ArrayDeque<>();
				thread.grown = false;
			}
			thread.running = false;
		}
	}

	private static void run(Runnable signal) {
		try {
			signal.run();
		}
		catch (RuntimeException ex) {
			// A subscriber's failure must not stop the signals of other callers.
			Thread.currentThread().getUncaughtExceptionHandler().uncaughtException(Thread.currentThread(), ex);
		}
	}

	private static final class Signalling {

		private static final int KEPT = 1024;

		private ArrayDeque<Runnable> pending = new ArrayDeque<>();

		private boolean running;

		private boolean grown;

	}

}
