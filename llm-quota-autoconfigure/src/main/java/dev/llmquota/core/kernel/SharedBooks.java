package dev.llmquota.core.kernel;

/**
 * A shared store's part: the calls it was asked about, and the bookings and looks at
 * daily limits that go to it.
 *
 * @param <C> the calls
 */
public interface SharedBooks<C extends Admission.Call> extends Books<C> {

	/** Whether the shared store was asked about the call before. */
	boolean asked(C call);

	/**
	 * Whether the call's daily limits are still to be looked at while a bound holds it.
	 */
	boolean needsDayCheck(C call);

	/**
	 * Whether two calls take from a bucket in common (their pool's, or their account's).
	 */
	boolean sharesBucket(C call, C other);

	/** Effect: the call goes to the shared store to be booked; it keeps its place. */
	void bookShared(C call);

	/** Effect: the call's daily limits go to the shared store to be looked at. */
	void checkDay(C call);

}
