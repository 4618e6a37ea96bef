package dev.llmquota.store;

import dev.llmquota.core.QuotaStore;

/**
 * The in-process store against the store contract.
 */
class LocalQuotaStoreTests extends QuotaStoreContractTests {

	@Override
	protected QuotaStore createStore() {
		return new LocalQuotaStore();
	}

}
