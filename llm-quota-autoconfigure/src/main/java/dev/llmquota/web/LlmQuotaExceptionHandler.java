package dev.llmquota.web;

import java.time.Duration;

import dev.llmquota.BudgetExhaustedException;
import dev.llmquota.DurationText;
import dev.llmquota.LlmQuotaException;
import dev.llmquota.QuotaEngineClosedException;
import dev.llmquota.QuotaExhaustedException;
import dev.llmquota.QuotaStoreUnavailableException;
import dev.llmquota.QuotaWaitTimeoutException;
import dev.llmquota.RateLimitedException;
import dev.llmquota.UnroutableCallException;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;

/**
 * Answers an llm-quota exception that escapes a controller (Spring MVC or WebFlux) with a
 * {@link ProblemDetail} instead of a 500: 429 for a wait that timed out or a provider
 * that kept rate-limiting, 503 for a spent quota or budget, an unreachable store or an
 * engine shutting down; with {@code Retry-After} where a time is known. The body names
 * the provider entry, region, model and dimension, never a prompt, a header or a key. It
 * has the lowest precedence, so an application's own exception handlers win.
 */
@ControllerAdvice
@Order(Ordered.LOWEST_PRECEDENCE)
public class LlmQuotaExceptionHandler {

	/**
	 * Answers an llm-quota exception.
	 * @param ex the exception
	 * @return the problem answer
	 */
	@ExceptionHandler(LlmQuotaException.class)
	public ResponseEntity<ProblemDetail> handle(LlmQuotaException ex) {
		HttpStatus status = statusOf(ex);
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detailOf(ex));
		problem.setTitle(titleOf(ex));
		problem.setProperty("provider", ex.getProvider());
		problem.setProperty("region", ex.getRegion());
		problem.setProperty("model", ex.getModel());
		problem.setProperty("dimension", ex.getDimension());
		HttpHeaders headers = new HttpHeaders();
		Duration retryAfter = (ex instanceof QuotaStoreUnavailableException || ex instanceof QuotaEngineClosedException)
				? null : ex.getRetryAfter();
		if (retryAfter != null) {
			long seconds = Math.max(1, (retryAfter.toMillis() + 999) / 1000);
			headers.set(HttpHeaders.RETRY_AFTER, Long.toString(seconds));
			problem.setProperty("retryAfter", DurationText.of(retryAfter));
		}
		return ResponseEntity.status(status).headers(headers).body(problem);
	}

	/**
	 * Returns the status an exception answers with.
	 * @param ex the exception
	 * @return 429, 503, or 500 for a call the application addressed to a route that
	 * cannot serve it
	 */
	static HttpStatus statusOf(LlmQuotaException ex) {
		if (ex instanceof UnroutableCallException) {
			return HttpStatus.INTERNAL_SERVER_ERROR;
		}
		return (ex instanceof QuotaWaitTimeoutException || ex instanceof RateLimitedException)
				? HttpStatus.TOO_MANY_REQUESTS : HttpStatus.SERVICE_UNAVAILABLE;
	}

	private static String titleOf(LlmQuotaException ex) {
		if (ex instanceof QuotaWaitTimeoutException) {
			return "LLM quota wait timed out";
		}
		if (ex instanceof RateLimitedException) {
			return "LLM provider rate limit";
		}
		if (ex instanceof QuotaExhaustedException) {
			return "LLM provider quota spent";
		}
		if (ex instanceof BudgetExhaustedException) {
			return "LLM budget spent";
		}
		if (ex instanceof QuotaStoreUnavailableException) {
			return "LLM quota store unavailable";
		}
		if (ex instanceof UnroutableCallException) {
			return "LLM route cannot serve the call";
		}
		return "LLM quota engine shut down";
	}

	/**
	 * A sentence for the caller built from the exception's fields only: the provider's
	 * own message text (which may name an organization) stays in the logs.
	 */
	private static String detailOf(LlmQuotaException ex) {
		String what = "model '" + ex.getModel() + "' of provider '" + ex.getProvider() + "'";
		String dimension = (ex.getDimension() != null) ? " on " + ex.getDimension() : "";
		if (ex instanceof QuotaWaitTimeoutException timeout) {
			return "No room for a call to " + what + " within " + DurationText.of(timeout.getWaited()) + dimension
					+ ".";
		}
		if (ex instanceof RateLimitedException) {
			return "The provider kept rate-limiting calls to " + what + dimension + ".";
		}
		if (ex instanceof QuotaExhaustedException) {
			return "A quota of the provider is spent for " + what + dimension + ".";
		}
		if (ex instanceof BudgetExhaustedException) {
			return "The " + ex.getDimension() + " limit of " + what + " is spent.";
		}
		if (ex instanceof QuotaStoreUnavailableException) {
			return "The quota store does not answer; no call to " + what + " was sent.";
		}
		if (ex instanceof UnroutableCallException unroutable) {
			return "Route '" + unroutable.getRoute() + "' serves model calls only; this call was not sent.";
		}
		return "The application is shutting down; no call to " + what + " was sent.";
	}

}
