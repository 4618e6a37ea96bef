package dev.llmquota;

/**
 * The shared quota store (Redis) does not answer and {@code llm.quota.redis.on-failure}
 * is {@code reject}: the call was not sent, because no replica can know what the others
 * spend. With {@code on-failure: local} (the default) calls go on with a local share of
 * each limit instead.
 */
public class QuotaStoreUnavailableException extends LlmQuotaException {

	public QuotaStoreUnavailableException(String provider, String region, String model, String reason) {
		super("The llm-quota store is unreachable (" + reason + "); the call to " + where(provider, region, model)
				+ " was not sent. Set llm.quota.redis.on-failure=local to go on with a local share of each limit"
				+ " while the store is down.", provider, region, model, null, null);
	}

}
