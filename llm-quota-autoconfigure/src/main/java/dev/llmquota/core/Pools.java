package dev.llmquota.core;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The engine's provider entries, each with its account and the pools of its configured
 * models, and the pools made for unlisted models, least recently used first, up to
 * {@code max-pools}. Also applies limits changed at run time.
 */
final class Pools {

	private final QuotaConfig config;

	private final QuotaStore store;

	private final QuotaEvents events;

	private final Map<String, Entry> entries = new LinkedHashMap<>();

	private final ReentrantLock unlistedLock = new ReentrantLock();

	/** Pools of unlisted models, least recently used first. */
	private final LinkedHashMap<String, Pool> unlisted = new LinkedHashMap<>(16, 0.75f, true);

	Pools(QuotaConfig config, QuotaStore store, QuotaClock clock, QuotaEvents events, Executor storeThread) {
		this.config = config;
		this.store = store;
		this.events = events;
		config.providers()
			.values()
			.forEach((spec) -> this.entries.put(spec.id(),
					new Entry(spec, config.settings(), store, clock, events, storeThread)));
	}

	/** Returns the entry of a provider id. */
	Entry entry(String provider) {
		Entry entry = this.entries.get(provider);
		if (entry == null) {
			throw new IllegalArgumentException("No provider entry '" + provider + "' under llm.quota.providers");
		}
		return entry;
	}

	Collection<Entry> entries() {
		return this.entries.values();
	}

	Pool pool(String provider, String model) {
		Entry entry = entry(provider);
		Pool pool = entry.configured(model);
		if (pool != null) {
			return pool;
		}
		String key = provider + '\u0000' + model;
		this.unlistedLock.lock();
		try {
			pool = this.unlisted.get(key);
			if (pool == null) {
				PoolSpec spec = entry.spec.template().orElse(entry.spec.unlisted()).forModel(model);
				pool = new Pool(entry.account, spec, this.config.settings());
				this.unlisted.put(key, pool);
				this.events.poolCreated(pool);
				if (this.unlisted.size() > this.config.settings().maxPools()) {
					// The least recently used pool goes with its buckets; calls it
					// admitted keep their permits.
					Pool evicted = this.unlisted.remove(this.unlisted.keySet().iterator().next());
					this.store.forget(evicted.buckets());
					this.events.poolEvicted(evicted);
				}
			}
			return pool;
		}
		finally {
			this.unlistedLock.unlock();
		}
	}

	List<Pool> pools() {
		List<Pool> pools = new ArrayList<>();
		this.entries.values().forEach((entry) -> entry.configured.values().stream().distinct().forEach(pools::add));
		this.unlistedLock.lock();
		try {
			pools.addAll(this.unlisted.values());
		}
		finally {
			this.unlistedLock.unlock();
		}
		return pools;
	}

	/** A pool that exists: configured, or made for an unlisted model that was called. */
	Pool existingPool(Entry entry, String provider, String model) {
		Pool pool = entry.configured(model);
		if (pool == null) {
			this.unlistedLock.lock();
			try {
				pool = this.unlisted.get(provider + '\u0000' + model);
			}
			finally {
				this.unlistedLock.unlock();
			}
		}
		if (pool == null) {
			throw new IllegalArgumentException("No pool for model '" + model + "' of provider '" + provider + "'");
		}
		return pool;
	}

	/**
	 * Applies a limit another process published; one this process cannot apply (a pool it
	 * never made, a gate not configured here) is left alone.
	 */
	void limitPublished(String provider, String field, long limit) {
		int bar = field.indexOf('|');
		if (bar < 0) {
			return;
		}
		String model = field.substring(bar + 1);
		try {
			Dimension dimension = Dimension.fromId(field.substring(0, bar));
			Entry entry = entry(provider);
			Limits current = model.isEmpty() ? entry.account.limits() : existingPool(entry, provider, model).limits();
			// a limit equal to one this process learned still pins it
			boolean learned = !model.isEmpty() && existingPool(entry, provider, model).learned(dimension);
			if (learned || !Long.valueOf(limit).equals(current.asMap().get(dimension))) {
				applyLimit(provider, model.isEmpty() ? null : model, dimension, limit);
			}
		}
		catch (IllegalArgumentException ex) {
			// not applicable in this process
		}
	}

	/**
	 * Applies an operator's limit here.
	 * @return the model's id as its pool names it (whatever case it was asked in), or
	 * {@code null} for the account
	 */
	String applyLimit(String provider, String model, Dimension dimension, long limit) {
		if (limit < 1) {
			throw new IllegalArgumentException("A limit must be positive but was " + limit);
		}
		Entry entry = this.entries.get(provider);
		if (entry == null) {
			throw new IllegalArgumentException("No provider entry '" + provider + "'");
		}
		Account account = entry.account;
		if (dimension.countsMoney() && !entry.spec.priced()) {
			throw new IllegalArgumentException("No model of provider entry '" + provider
					+ "' has a price above 0, so its calls spend nothing and a " + dimension.id()
					+ " can never trip: set cost.input-per-million and cost.output-per-million on its models first");
		}
		if (model == null) {
			requireGate(account.limits(), dimension);
			account.change(dimension, limit);
			account.queue().read(() -> {
				account.resizeGates(this.config.settings());
				return null;
			});
			this.events.accountLimitsChanged(account);
		}
		else {
			Pool pool = existingPool(entry, provider, model);
			requireGate(pool.limits(), dimension);
			pool.change(dimension, limit);
			limitsChanged(pool);
			return pool.model();
		}
		account.queue().wake();
		return null;
	}

	/**
	 * A pool's limits changed (an operator's, or one learned from the provider): its
	 * gates follow, and waiting calls look again.
	 */
	void limitsChanged(Pool pool) {
		Account account = pool.account();
		account.queue().read(() -> {
			pool.resizeGates(this.config.settings());
			return null;
		});
		account.queue().wake();
	}

	private static void requireGate(Limits limits, Dimension dimension) {
		if (dimension == Dimension.CONCURRENT_REQUESTS && !limits.asMap().containsKey(dimension)) {
			throw new IllegalArgumentException(
					"concurrent-requests can be changed at run time only where it was configured at start");
		}
	}

	/** A provider entry: its account and the pools of its configured models. */
	static final class Entry {

		final ProviderSpec spec;

		final Account account;

		private final Map<String, Pool> configured = new HashMap<>();

		/**
		 * The configured pools by their ids and aliases in lower case, for a call that
		 * names its model in another case than the configuration ("GPT-4o" for gpt-4o):
		 * the same model, its limits apply. An id that two pools share in lower case
		 * matches neither.
		 */
		private final Map<String, Pool> folded = new HashMap<>();

		Entry(ProviderSpec spec, QuotaSettings settings, QuotaStore store, QuotaClock clock, QuotaEvents events,
				Executor storeThread) {
			this.spec = spec;
			long expected = spec.models()
				.values()
				.stream()
				.mapToLong((model) -> model.expectedLatency().toNanos())
				.max()
				.orElse(spec.template().orElse(spec.unlisted()).expectedLatency().toNanos());
			this.account = new Account(spec, settings, store, clock, events, expected, storeThread);
			spec.models().values().forEach((model) -> {
				Pool pool = new Pool(this.account, model, settings);
				this.configured.put(model.model(), pool);
				model.aliases().forEach((alias) -> this.configured.put(alias, pool));
			});
			Map<String, Pool> ambiguous = new HashMap<>();
			this.configured.forEach((id, pool) -> {
				Pool other = this.folded.putIfAbsent(id.toLowerCase(Locale.ROOT), pool);
				if (other != null && other != pool) {
					ambiguous.put(id.toLowerCase(Locale.ROOT), pool);
				}
			});
			ambiguous.keySet().forEach(this.folded::remove);
		}

		/**
		 * The configured pool a call's model names, in any case; {@code null} if none.
		 */
		Pool configured(String model) {
			Pool pool = this.configured.get(model);
			return (pool != null || model == null) ? pool : this.folded.get(model.toLowerCase(Locale.ROOT));
		}

	}

}
