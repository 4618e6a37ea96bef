package dev.llmquota.core;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * The one thread that books calls in a store shared by many processes, so no caller's
 * thread waits on the network and bookings go out in queue order.
 */
final class StoreThread implements Executor {

	private final ExecutorService executor = Executors.newSingleThreadExecutor((task) -> {
		Thread thread = new Thread(task, "llm-quota-store");
		thread.setDaemon(true);
		return thread;
	});

	@Override
	public void execute(Runnable task) {
		this.executor.execute(task);
	}

	/**
	 * Waits until the thread has run every task asked for so far, and those they asked
	 * for in turn, while {@code pending} says more are asked for.
	 */
	void awaitQuiet(BooleanSupplier pending) {
		for (int round = 0; round < 1_000; round++) {
			try {
				this.executor.submit(() -> {
				}).get(10, TimeUnit.SECONDS);
			}
			catch (RejectedExecutionException ex) {
				return;
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			catch (ExecutionException | TimeoutException ex) {
				throw new IllegalStateException("The store thread did not answer", ex);
			}
			if (!pending.getAsBoolean()) {
				return;
			}
		}
	}

	/**
	 * Stops taking tasks; a booking on its way back is given back before this returns.
	 */
	void close() {
		this.executor.shutdown();
		try {
			this.executor.awaitTermination(5, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
