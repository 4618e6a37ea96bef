package dev.llmquota.client.restclient;

import java.io.IOException;
import java.net.URI;

import dev.llmquota.provider.Waits;

import org.springframework.ai.retry.NonTransientAiException;
import org.springframework.ai.retry.TransientAiException;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.web.client.ResponseErrorHandler;

/**
 * Spring AI's error handler for its models on {@code RestClient} (Ollama's), made to
 * honor {@code x-should-retry: false}. Spring AI maps a server error to a
 * {@code TransientAiException}, which its {@code RetryTemplate} retries; every refusal
 * llm-quota hands on once its own attempts are spent (an overload still there, a 429 the
 * provider marks not to retry) says not to retry it, and becomes a
 * {@code NonTransientAiException}, which is not retried. Otherwise each of Spring AI's
 * retries would run llm-quota's attempts again.
 */
public final class SpringAiErrorHandler implements ResponseErrorHandler {

	private final ResponseErrorHandler handler;

	private SpringAiErrorHandler(ResponseErrorHandler handler) {
		this.handler = handler;
	}

	/**
	 * Returns a bean wrapped if it is Spring AI's own error handler, else the bean
	 * itself: an application's handler, whatever it maps, is left as it is.
	 * @param bean the bean
	 * @return the bean to use
	 */
	public static Object wrap(Object bean) {
		if (bean instanceof ResponseErrorHandler handler && !(bean instanceof SpringAiErrorHandler)
				&& bean.getClass().getName().startsWith("org.springframework.ai.")) {
			return new SpringAiErrorHandler(handler);
		}
		return bean;
	}

	@Override
	public boolean hasError(ClientHttpResponse response) throws IOException {
		return this.handler.hasError(response);
	}

	@Override
	public void handleError(URI url, HttpMethod method, ClientHttpResponse response) throws IOException {
		try {
			this.handler.handleError(url, method, response);
		}
		catch (TransientAiException ex) {
			if (Waits.retryAllowed(response.getHeaders()::getFirst)) {
				throw ex;
			}
			throw new NonTransientAiException(ex.getMessage());
		}
	}

}
