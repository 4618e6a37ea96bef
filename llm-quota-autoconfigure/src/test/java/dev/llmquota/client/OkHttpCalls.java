package dev.llmquota.client;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;

import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Response;

/**
 * OkHttp calls run as an SDK runs them: enqueued, on OkHttp's dispatcher.
 */
final class OkHttpCalls {

	private OkHttpCalls() {
	}

	/** Enqueues the call; its answer, or the IOException OkHttp hands the callback. */
	static CompletableFuture<Response> enqueue(Call call) {
		CompletableFuture<Response> answered = new CompletableFuture<>();
		call.enqueue(new Callback() {

			@Override
			public void onFailure(Call failed, IOException ex) {
				answered.completeExceptionally(ex);
			}

			@Override
			public void onResponse(Call done, Response response) {
				answered.complete(response);
			}

		});
		return answered;
	}

}
