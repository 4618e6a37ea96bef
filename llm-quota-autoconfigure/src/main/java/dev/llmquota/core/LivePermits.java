package dev.llmquota.core;

import java.util.ArrayList;
import java.util.List;

/**
 * The calls of one account in flight, under its admission lock: a list threaded through
 * the permits themselves, so that a call joining or leaving it neither hashes (an
 * identity hash is costly on a new object) nor allocates.
 */
final class LivePermits {

	private QuotaPermit first;

	private int size;

	void add(QuotaPermit permit) {
		permit.liveNext = this.first;
		permit.livePrevious = null;
		if (this.first != null) {
			this.first.livePrevious = permit;
		}
		this.first = permit;
		permit.live = true;
		this.size++;
	}

	/**
	 * Takes a permit off the list.
	 * @return whether it was on it
	 */
	boolean remove(QuotaPermit permit) {
		if (!permit.live) {
			return false;
		}
		if (permit.livePrevious != null) {
			permit.livePrevious.liveNext = permit.liveNext;
		}
		else {
			this.first = permit.liveNext;
		}
		if (permit.liveNext != null) {
			permit.liveNext.livePrevious = permit.livePrevious;
		}
		permit.liveNext = null;
		permit.livePrevious = null;
		permit.live = false;
		this.size--;
		return true;
	}

	int size() {
		return this.size;
	}

	/** Returns the permits on the list now, most recent first. */
	List<QuotaPermit> all() {
		List<QuotaPermit> all = new ArrayList<>(this.size);
		for (QuotaPermit permit = this.first; permit != null; permit = permit.liveNext) {
			all.add(permit);
		}
		return all;
	}

}
