package dev.llmquota.core;

import java.util.List;

/**
 * A provider entry's shared ceilings at run time: its buckets, its in-flight gates, and
 * the admission queue that orders the calls of all its pools.
 */
public final class Account {

	private final ProviderSpec provider;

	private final List<BucketSpec> buckets;

	private final Gates gates;

	private final LatencyEstimate latency;

	private final AdmissionQueue queue;

	Account(ProviderSpec provider, QuotaSettings settings, QuotaStore store, QuotaClock clock,
			long expectedLatencyNanos) {
		this.provider = provider;
		this.buckets = Buckets.of(provider, BucketSpec.Scope.ACCOUNT, "account", provider.account(),
				provider.accountBurstWindow(), settings);
		this.latency = new LatencyEstimate(expectedLatencyNanos);
		this.gates = new Gates(provider.account(), settings, provider.inFlightGate(), expectedLatencyNanos);
		this.queue = new AdmissionQueue(this, store, clock, settings);
	}

	/**
	 * Returns the provider entry.
	 * @return the provider entry's settings
	 */
	public ProviderSpec provider() {
		return this.provider;
	}

	/**
	 * Returns the account's buckets.
	 * @return the buckets, one per limited rate or daily dimension
	 */
	public List<BucketSpec> buckets() {
		return this.buckets;
	}

	/**
	 * Returns the account's in-flight gates; read them only through a snapshot.
	 * @return the gates
	 */
	List<InFlightGate> gates() {
		return this.gates.all();
	}

	Gates gateSet() {
		return this.gates;
	}

	LatencyEstimate latency() {
		return this.latency;
	}

	AdmissionQueue queue() {
		return this.queue;
	}

}
