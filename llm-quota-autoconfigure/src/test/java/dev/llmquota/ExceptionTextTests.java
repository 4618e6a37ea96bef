package dev.llmquota;

import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Exceptions print durations as people write them, and say when a call may succeed.
 */
class ExceptionTextTests {

	@ParameterizedTest(name = "{0} -> {1}")
	@CsvSource(textBlock = """
			PT30S,        30s
			PT1.4S,       1.4s
			PT0.25S,      250ms
			PT2M30S,      2m30s
			PT1H5M,       1h5m
			PT0S,         0ms
			PT0.000005S,  5us
			PT1H0.5S,     1h0.5s
			""")
	void durationsReadAsTheyAreWritten(Duration duration, String text) {
		assertThat(DurationText.of(duration)).isEqualTo(text);
	}

	@Test
	void everyExceptionSaysWhenToRetryWhereATimeIsKnown() {
		assertThat(new QuotaWaitTimeoutException("p", "r", "m", "tokens-per-minute", "pool tokens-per-minute",
				Duration.ofSeconds(30), Duration.ofMillis(1_500))
			.getRetryAfter()).isEqualTo(Duration.ofMillis(1_500));
		assertThat(new QuotaWaitTimeoutException("p", "r", "m", "tokens-per-minute", "pool tokens-per-minute",
				Duration.ofSeconds(30))
			.getRetryAfter()).isNull();
		assertThat(new RateLimitedException("p", "r", "m", "tokens-per-minute", Duration.ofSeconds(7), "why")
			.getRetryAfter()).isEqualTo(Duration.ofSeconds(7));
		assertThat(new QuotaExhaustedException("p", "r", "m", null, "spent", Instant.now().plusSeconds(3600))
			.getRetryAfter()).isBetween(Duration.ofMinutes(59), Duration.ofHours(1));
		assertThat(new QuotaExhaustedException("p", "r", "m", null, "spent", null).getRetryAfter()).isNull();
		assertThat(
				new BudgetExhaustedException("p", "r", "m", "budget-per-day", "account", Instant.now().minusSeconds(5))
					.getRetryAfter())
			.isEqualTo(Duration.ZERO);
		assertThat(new QuotaStoreUnavailableException("p", "r", "m", "down").getRetryAfter()).isNull();
		assertThat(new QuotaEngineClosedException("p", "r", "m").getRetryAfter()).isNull();
	}

	@Test
	void messagesPrintDurationsAsPeopleWriteThem() {
		assertThat(new QuotaWaitTimeoutException("p", "r", "m", "tokens-per-minute", "pool tokens-per-minute",
				Duration.ofSeconds(30), Duration.ofMillis(2_500))
			.getMessage()).contains("within 30s").contains("in 2.5s").doesNotContain("PT");
		assertThat(new RateLimitedException("p", "r", "m", "tokens-per-minute", Duration.ofMillis(11_054), "why")
			.getMessage()).contains("wait 11.054s").doesNotContain("PT");
	}

}
