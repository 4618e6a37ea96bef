package dev.llmquota.test.simulator;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Every request the simulator answered, in completion order, for assertions such as "the
 * provider never saw a request it had to refuse".
 */
public final class RequestLog {

	private final List<RequestRecord> records = new CopyOnWriteArrayList<>();

	void add(RequestRecord record) {
		this.records.add(record);
	}

	/**
	 * All records so far. An answered call appears as its last byte is sent, so by the
	 * time its caller has read the answer; a refused or rejected one before its answer.
	 * @return an immutable copy
	 */
	public List<RequestRecord> records() {
		return List.copyOf(this.records);
	}

	/**
	 * Requests that exceeded a limit, refused or (with enforcement off) let through.
	 * @return the over-limit records
	 */
	public List<RequestRecord> overLimit() {
		return this.records.stream().filter(RequestRecord::overLimit).toList();
	}

	/**
	 * Requests refused by a rate limit, per-day cap or administrative exhaustion.
	 * @return the refused records
	 */
	public List<RequestRecord> refused() {
		return this.records.stream()
			.filter((record) -> record.outcome() == RequestRecord.Outcome.REFUSED
					|| record.outcome() == RequestRecord.Outcome.EXHAUSTED)
			.toList();
	}

	/**
	 * The number of records.
	 * @return the size
	 */
	public int size() {
		return this.records.size();
	}

	/**
	 * Forgets all records.
	 */
	public void clear() {
		this.records.clear();
	}

}
