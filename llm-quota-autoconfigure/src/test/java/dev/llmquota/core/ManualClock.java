package dev.llmquota.core;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import reactor.core.Disposable;

/**
 * A clock that moves only when a test advances it; timers due by then run in order, on
 * the advancing thread.
 */
public final class ManualClock implements QuotaClock {

	private final PriorityQueue<Task> tasks = new PriorityQueue<>();

	private final List<Runnable> settles = new CopyOnWriteArrayList<>();

	private long nanos;

	private Instant wall;

	private long sequence;

	private long scheduled;

	public ManualClock() {
		this(Instant.parse("2026-11-30T12:00:00Z"));
	}

	public ManualClock(Instant start) {
		this(start, 1_000_000_000L);
	}

	/**
	 * A clock whose monotonic time starts where a test says: {@code System.nanoTime()}
	 * has an arbitrary origin, and may read negative.
	 */
	public ManualClock(Instant start, long nanos) {
		this.nanos = nanos;
		this.wall = start;
	}

	@Override
	public synchronized long nanoTime() {
		return this.nanos;
	}

	@Override
	public synchronized Instant instant() {
		return this.wall;
	}

	@Override
	public synchronized Disposable schedule(long delayNanos, Runnable task) {
		this.scheduled++;
		Task scheduled = new Task(this.nanos + Math.max(0, delayNanos), this.sequence++, task);
		this.tasks.add(scheduled);
		return scheduled;
	}

	/**
	 * Has the clock wait for work that runs off the advancing thread (an engine's store
	 * thread) before it moves and after each timer, so what a timer set off happens at
	 * the time the timer fell due, as it does where everything runs on this thread.
	 * @param settle waits until that work is done
	 */
	public void settleWith(Runnable settle) {
		this.settles.add(settle);
	}

	private void settle() {
		this.settles.forEach(Runnable::run);
	}

	/**
	 * Moves both clocks forward, running every timer that falls due, at its due time.
	 * @param duration how far
	 */
	public void advance(Duration duration) {
		settle();
		long target;
		synchronized (this) {
			target = this.nanos + duration.toNanos();
		}
		while (true) {
			Task next;
			synchronized (this) {
				next = this.tasks.peek();
				if (next == null || next.due > target) {
					this.wall = this.wall.plusNanos(target - this.nanos);
					this.nanos = target;
					return;
				}
				this.tasks.poll();
				this.wall = this.wall.plusNanos(next.due - this.nanos);
				this.nanos = Math.max(this.nanos, next.due);
			}
			next.run();
			settle();
		}
	}

	/**
	 * Moves only the wall clock, as an NTP correction or a daylight-saving mistake would;
	 * monotonic time and timers stay.
	 * @param duration how far (negative to go back)
	 */
	public void jumpWall(Duration duration) {
		settle();
		synchronized (this) {
			this.wall = this.wall.plus(duration);
		}
	}

	/**
	 * Returns how many timers were ever scheduled.
	 * @return timers scheduled so far
	 */
	public synchronized long scheduledTimers() {
		return this.scheduled;
	}

	/**
	 * Returns how many timers wait.
	 * @return pending timers
	 */
	public synchronized int pendingTimers() {
		return (int) this.tasks.stream().filter((task) -> !task.isDisposed()).count();
	}

	private static final class Task implements Comparable<Task>, Disposable {

		private final long due;

		private final long sequence;

		private final Runnable runnable;

		private final AtomicBoolean disposed = new AtomicBoolean();

		Task(long due, long sequence, Runnable runnable) {
			this.due = due;
			this.sequence = sequence;
			this.runnable = runnable;
		}

		void run() {
			if (!this.disposed.get()) {
				this.runnable.run();
			}
		}

		@Override
		public void dispose() {
			this.disposed.set(true);
		}

		@Override
		public boolean isDisposed() {
			return this.disposed.get();
		}

		@Override
		public int compareTo(Task other) {
			int byDue = Long.compare(this.due, other.due);
			return (byDue != 0) ? byDue : Long.compare(this.sequence, other.sequence);
		}

	}

}
