package dev.llmquota.core;

import java.util.List;

/**
 * How an account's queue is run: where its calls are booked. {@link LocalDrain} books in
 * this process's books, under the queue's lock; {@link SharedDrain} books in a store
 * shared by many processes, from the store thread, and may book a call ahead of its
 * start. Both apply the same {@link dev.llmquota.core.kernel.Admission rules}.
 */
interface Drain {

	/**
	 * Runs the queue, under its lock: admits what may go now, or asks for a run.
	 * @param after the signals to emit once the lock is released
	 */
	void run(List<Runnable> after);

	/**
	 * Admits a call at once when nothing holds it and its books have room now, under the
	 * queue's lock, with nobody waiting; otherwise takes nothing.
	 * @param waiter the call, not queued
	 * @param after the signals to emit once the lock is released
	 * @return whether it was admitted
	 */
	boolean admitsAlone(Waiter waiter, List<Runnable> after);

	/**
	 * How soon a call would be admitted were it asked now, taking nothing, under the
	 * queue's lock; the queue's state is filled in by the engine.
	 * @param probe the call, not queued
	 * @param ahead the calls of its pool waiting before it
	 * @param now the monotonic time
	 * @param wallNow the wall time
	 * @return the headroom
	 */
	Headroom headroom(Waiter probe, List<Waiter> ahead, long now, java.time.Instant wallNow);

	/**
	 * Room came back here (a refund, a release), under the queue's lock; a drain that
	 * needs the time reads it, so a release with nobody waiting reads no clock.
	 */
	void roomCameBack();

	/**
	 * Calls booked ahead, waiting for their start, under the queue's lock.
	 * @return the calls
	 */
	List<Waiter> scheduled();

	/**
	 * Takes a call booked ahead off the schedule and frees its gates, under the queue's
	 * lock.
	 * @param waiter the call
	 * @return its booking, to give back
	 */
	Booking.Booked unschedule(Waiter waiter);

	/**
	 * Whether a run was asked for and has not begun.
	 * @return whether one is pending
	 */
	boolean pending();

}
