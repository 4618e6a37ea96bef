package dev.llmquota.core.kernel;

/**
 * One account's books and calls as a drain keeps them, under the queue's lock: the rules
 * read them here and hand their effects back here.
 *
 * @param <C> the calls
 */
public interface Books<C extends Admission.Call> {

	/**
	 * Whether the call waits in the queue to be decided: neither decided nor on its way
	 * to a shared store.
	 */
	boolean waiting(C call);

	/** The call is looked at: its charges follow limits learned meanwhile. */
	void look(C call);

	/**
	 * Whether a spent quota fails the call now; one probe now and then goes through where
	 * the provider gave no reset.
	 */
	boolean exhausted(C call, long now);

	/**
	 * When the provider penalty holding the call ends; {@code now} or earlier when none
	 * holds it.
	 */
	long penaltyEnd(C call, long now);

	/**
	 * How long the call's daily limits make it wait as the books stand; 0 when they allow
	 * it, and from a shared store's books always 0 (they are looked at from the store
	 * thread: {@link SharedBooks#checkDay}).
	 */
	long dayWait(C call, long now);

	/**
	 * How long the call's buckets make it wait as the books stand.
	 */
	long wait(C call, long now);

	/**
	 * Books the call in this process's books to start now.
	 * @return {@code null} when booked, kept for {@link #admit} or {@link #giveBack};
	 * otherwise the refusal, having booked nothing
	 */
	Admission.Refusal book(C call, long now);

	/** Gives back the booking just made for the call. */
	void giveBack(C call, long now);

	/** Effect: admits the call with the booking just made; it leaves the queue. */
	void admit(C call, long now);

	/** Effect: fails the call; it leaves the queue. */
	void fail(C call, Admission.Failure failure, long now);

	/**
	 * Effect: the call waits on, held as said.
	 * @param gate the bound that holds it, for {@link Admission.Hold#GATE}
	 * @param head the head, for {@link Admission.Hold#HEAD}
	 */
	void hold(C call, Admission.Hold hold, int gate, C head);

	/** Effect: the call's buckets or a penalty allow it at this time. */
	void readyAt(C call, long at);

	/** Effect: the queue is to run again at this time. */
	void wakeAt(long at, long now);

}
