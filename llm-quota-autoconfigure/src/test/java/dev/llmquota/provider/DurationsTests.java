package dev.llmquota.provider;

import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reset and wait grammars providers send.
 */
class DurationsTests {

	@ParameterizedTest(name = "{0}")
	@CsvSource({ "12ms, 12000000", "9ms, 9000000", "1s, 1000000000", "6m0s, 360000000000", "57.904s, 57904000000",
			"19m45.394s, 1185394000000", "1m26.4s, 86400000000", "1h4m48s, 3888000000000", "21.037s, 21037000000",
			"285ms, 285000000", "1h2m3.5s, 3723500000000", "6, 6000000000", "0.5, 500000000", "84ms, 84000000",
			"7m12s, 432000000000" })
	void readsGoDurationsAndSeconds(String text, long nanos) {
		assertThat(Durations.parse(text)).isEqualTo(Duration.ofNanos(nanos));
	}

	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "", "soon", "-1", "12 ms", "1x", "ms", "1.2.3s", "5s trailing", "∞" })
	void leavesGarbageUnread(String text) {
		assertThat(Durations.parse(text)).isNull();
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource({ "2025-10-14T09:21:08Z, 2025-10-14T09:21:08Z", "2025-02-24T22:25:32+01:00, 2025-02-24T21:25:32Z" })
	void readsRfc3339Instants(String text, Instant expected) {
		assertThat(Durations.instant(text)).isEqualTo(expected);
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|',
			value = { "6 | 6", "Tue, 14 Oct 2025 09:21:13 GMT | 6", "Tue, 14 Oct 2025 09:21:00 GMT | 0" })
	void readsRetryAfterAsSecondsOrHttpDate(String text, long seconds) {
		Instant now = Instant.parse("2025-10-14T09:21:07Z");
		assertThat(Durations.retryAfter(text, now)).isEqualTo(Duration.ofSeconds(seconds));
	}

}
