package dev.llmquota.core;

import java.util.ArrayList;
import java.util.List;

/**
 * One (provider entry, model) at run time: the model's buckets and in-flight gates, tied
 * to its account. A call takes from both in one atomic decision.
 */
public final class Pool {

	private final Account account;

	private final PoolSpec spec;

	private final List<BucketSpec> buckets;

	private final Gates gates;

	private final LatencyEstimate latency;

	Pool(Account account, PoolSpec spec, QuotaSettings settings) {
		this.account = account;
		this.spec = spec;
		ProviderSpec provider = account.provider();
		this.buckets = Buckets.of(provider, BucketSpec.Scope.POOL, "pool:" + spec.model(), spec.limits(),
				spec.burstWindow(), settings);
		long expected = spec.expectedLatency().toNanos();
		this.latency = new LatencyEstimate(expected);
		this.gates = new Gates(spec.limits(), settings, provider.inFlightGate(), expected);
	}

	/**
	 * Returns the provider entry's id.
	 * @return the provider entry
	 */
	public String provider() {
		return this.account.provider().id();
	}

	/**
	 * Returns the provider entry's region label.
	 * @return the region
	 */
	public String region() {
		return this.account.provider().region();
	}

	/**
	 * Returns the model id.
	 * @return the model
	 */
	public String model() {
		return this.spec.model();
	}

	/**
	 * Returns the pool's settings.
	 * @return the settings
	 */
	public PoolSpec spec() {
		return this.spec;
	}

	/**
	 * Returns the account this pool draws from too.
	 * @return the account
	 */
	public Account account() {
		return this.account;
	}

	/**
	 * Returns the pool's own buckets.
	 * @return the buckets, one per limited rate or daily dimension
	 */
	public List<BucketSpec> buckets() {
		return this.buckets;
	}

	/**
	 * Returns what a call takes from every bucket of the pool and the account.
	 * @param demand the call's demand
	 * @return the charges, pool first
	 */
	public List<Charge> charges(Demand demand) {
		List<Charge> charges = new ArrayList<>(this.buckets.size() + this.account.buckets().size());
		add(charges, this.buckets, demand);
		add(charges, this.account.buckets(), demand);
		return charges;
	}

	private void add(List<Charge> charges, List<BucketSpec> buckets, Demand demand) {
		for (BucketSpec bucket : buckets) {
			charges.add(new Charge(bucket, bucket.dimension().unitsAtAdmission(demand, this.spec.accounting())));
		}
	}

	List<InFlightGate> gates() {
		return this.gates.all();
	}

	Gates gateSet() {
		return this.gates;
	}

	LatencyEstimate latency() {
		return this.latency;
	}

	@Override
	public String toString() {
		return "Pool[" + provider() + "/" + region() + "/" + model() + "]";
	}

}
