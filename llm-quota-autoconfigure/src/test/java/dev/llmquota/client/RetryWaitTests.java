package dev.llmquota.client;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

import dev.llmquota.core.Dimension;
import dev.llmquota.core.ManualClock;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.core.TestConfigs;
import dev.llmquota.store.LocalQuotaStore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * How long a retried call waits between its attempts, decided for an answer on the
 * engine's clock: never past the call's {@code max-wait} or {@code retry.max-backoff},
 * and a caller whose wait is interrupted gets Java's answer to an interrupt, not the
 * policy's internal signal.
 */
class RetryWaitTests {

	private static final URI URL = URI.create("http://127.0.0.1:1/v1/chat/completions");

	private static final byte[] REQUEST = "{\"model\":\"m\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":\"Hi.\"}]}"
		.getBytes(StandardCharsets.UTF_8);

	private static final byte[] RATE_LIMITED = "{\"error\":{\"message\":\"Rate limit reached for requests\",\"type\":\"requests\",\"code\":\"rate_limit_exceeded\"}}"
		.getBytes(StandardCharsets.UTF_8);

	private final ManualClock clock = new ManualClock();

	private final QuotaEngine engine = TestConfigs.provider()
		.model("m", TestConfigs.limits(Dimension.REQUESTS_PER_MINUTE, 600))
		.engine(new LocalQuotaStore(), this.clock);

	@Test
	void aRetryNeverSleepsPastWhatIsLeftOfTheCallsMaxWait() {
		LlmQuotaCalls calls = new LlmQuotaCalls(this.engine);
		CallPlan plan = plan(calls);
		// the provider asks for 2 s; 2.05 s of the call's max-wait are left
		long deadline = this.clock.nanoTime() + Duration.ofMillis(2_050).toNanos();
		GovernedCall call = calls.start(plan, calls.admit(plan, deadline).block());
		for (int i = 0; i < 20; i++) {
			Outcome outcome = calls.answered(call, 429, Map.of("retry-after", "2")::get, RATE_LIMITED, 1, deadline);
			assertThat(outcome.action()).isEqualTo(Outcome.Action.RETRY);
			assertThat(outcome.delay()).as("the wait, with its jitter, within the call's max-wait")
				.isBetween(Duration.ofSeconds(2), Duration.ofMillis(2_050));
		}
	}

	@Test
	void aRetryNeverSleepsPastMaxBackoff() {
		RetrySettings retry = RetrySettings.DEFAULTS;
		LlmQuotaCalls calls = new LlmQuotaCalls(this.engine, retry);
		CallPlan plan = plan(calls);
		long deadline = this.clock.nanoTime() + Duration.ofMinutes(5).toNanos();
		GovernedCall call = calls.start(plan, calls.admit(plan, deadline).block());
		String wait = String.valueOf(retry.maxBackoff().toSeconds());
		for (int i = 0; i < 20; i++) {
			Outcome outcome = calls.answered(call, 429, Map.of("retry-after", wait)::get, RATE_LIMITED, 1, deadline);
			assertThat(outcome.action()).isEqualTo(Outcome.Action.RETRY);
			assertThat(outcome.delay()).as("a wait of max-backoff, with its jitter, within max-backoff")
				.isEqualTo(retry.maxBackoff());
		}
	}

	/**
	 * A back-off of llm-quota's own at max-backoff: the jitter has no room later, so it
	 * goes earlier; every caller held together would otherwise retry at one instant.
	 */
	@Test
	void aBackOffAtMaxBackoffKeepsItsJitterBelowIt() {
		RetrySettings retry = new RetrySettings(4, Duration.ofMillis(500), Duration.ofMillis(500), Duration.ofHours(1));
		LlmQuotaCalls calls = new LlmQuotaCalls(this.engine, retry);
		CallPlan plan = plan(calls);
		long deadline = this.clock.nanoTime() + Duration.ofMinutes(5).toNanos();
		GovernedCall call = calls.start(plan, calls.admit(plan, deadline).block());
		Set<Duration> waits = new HashSet<>();
		for (int i = 0; i < 20; i++) {
			Outcome outcome = calls.answered(call, 429, (name) -> null, RATE_LIMITED, 1, deadline);
			assertThat(outcome.action()).isEqualTo(Outcome.Action.RETRY);
			assertThat(outcome.delay()).isBetween(Duration.ofMillis(450), Duration.ofMillis(500));
			waits.add(outcome.delay());
		}
		assertThat(waits).as("the waits of 20 callers held together").hasSizeGreaterThan(1);
	}

	@Test
	void aBlockingCallInterruptedWhileItWaitsToRetryGetsAnInterruptedIOException() throws InterruptedException {
		LlmQuotaCalls calls = new LlmQuotaCalls(this.engine);
		CallPlan plan = plan(calls);
		AtomicReference<Throwable> failure = new AtomicReference<>();
		AtomicReference<Boolean> interrupted = new AtomicReference<>();
		Thread caller = new Thread(() -> {
			try {
				calls.retryPolicy().blocking(plan, (number) -> {
					throw new RetryPolicy.RetryAfter(Duration.ofMinutes(1));
				});
			}
			catch (IOException | RuntimeException ex) {
				failure.set(ex);
			}
			interrupted.set(Thread.currentThread().isInterrupted());
		});
		caller.start();
		await().atMost(Duration.ofSeconds(10)).until(() -> caller.getState() == Thread.State.TIMED_WAITING);
		caller.interrupt();
		caller.join(10_000);
		assertThat(failure.get()).as("what the caller gets, never the policy's signal")
			.isInstanceOf(InterruptedIOException.class);
		assertThat(interrupted.get()).as("the thread's interrupt kept").isTrue();
	}

	private static CallPlan plan(LlmQuotaCalls calls) {
		ProviderEntry entry = calls.entry("POST", URL, (name) -> null, (name) -> null);
		return calls.plan(entry, URL, REQUEST, (name) -> null);
	}

}
