package dev.llmquota.client;

import java.net.URI;

import dev.llmquota.client.restclient.SpringAiErrorHandler;
import org.junit.jupiter.api.Test;

import org.springframework.ai.retry.NonTransientAiException;
import org.springframework.ai.retry.RetryUtils;
import org.springframework.ai.retry.TransientAiException;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.mock.http.client.MockClientHttpResponse;
import org.springframework.web.client.ResponseErrorHandler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Spring AI's error handler under llm-quota: what says not to be retried is not, and
 * everything else is mapped as Spring AI maps it.
 */
class SpringAiErrorHandlerTests {

	private static final URI URL = URI.create("http://localhost/api/chat");

	private final ResponseErrorHandler handler = (ResponseErrorHandler) SpringAiErrorHandler
		.wrap(RetryUtils.DEFAULT_RESPONSE_ERROR_HANDLER);

	@Test
	void anOverloadMarkedNotToBeRetriedIsNotTransient() {
		MockClientHttpResponse response = new MockClientHttpResponse("busy".getBytes(), HttpStatus.SERVICE_UNAVAILABLE);
		response.getHeaders().set("x-should-retry", " FALSE ");
		assertThatExceptionOfType(NonTransientAiException.class)
			.isThrownBy(() -> this.handler.handleError(URL, HttpMethod.POST, response))
			.withMessageContaining("503")
			.withMessageContaining("busy");
	}

	@Test
	void anUnmarkedOverloadIsLeftToSpringAisRetry() {
		MockClientHttpResponse response = new MockClientHttpResponse("busy".getBytes(), HttpStatus.SERVICE_UNAVAILABLE);
		response.getHeaders().set("x-should-retry", "true");
		assertThatExceptionOfType(TransientAiException.class)
			.isThrownBy(() -> this.handler.handleError(URL, HttpMethod.POST, response));
	}

	@Test
	void aClientErrorIsMappedAsSpringAiMapsIt() throws Exception {
		MockClientHttpResponse response = new MockClientHttpResponse("no".getBytes(), HttpStatus.BAD_REQUEST);
		response.getHeaders().set("x-should-retry", "false");
		assertThat(this.handler.hasError(response)).isTrue();
		assertThatExceptionOfType(NonTransientAiException.class)
			.isThrownBy(() -> this.handler.handleError(URL, HttpMethod.POST, response));
	}

	@Test
	void onlySpringAisOwnHandlerIsWrapped() {
		ResponseErrorHandler own = (response) -> false;
		assertThat(SpringAiErrorHandler.wrap(own)).isSameAs(own);
		assertThat(SpringAiErrorHandler.wrap(this.handler)).isSameAs(this.handler);
		assertThat(SpringAiErrorHandler.wrap("not a handler")).isEqualTo("not a handler");
	}

}
