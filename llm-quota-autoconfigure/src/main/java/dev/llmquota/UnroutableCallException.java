package dev.llmquota;

/**
 * A call addressed to a route that spends no model's quota (a file upload, a batch, a
 * listing): a route serves model calls only, and no one of its targets serves such a call
 * (a file uploaded to one deployment is unknown to the others). Send it to a provider
 * entry's {@code base-url}. Nothing was sent.
 */
public class UnroutableCallException extends LlmQuotaException {

	private final String route;

	public UnroutableCallException(String route, String message) {
		super(message, null, null, null, null, null);
		this.route = route;
	}

	/**
	 * Returns the route's name.
	 * @return the route
	 */
	public String getRoute() {
		return this.route;
	}

}
