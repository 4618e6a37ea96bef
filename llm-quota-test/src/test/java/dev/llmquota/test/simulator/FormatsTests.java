package dev.llmquota.test.simulator;

import java.time.Duration;
import java.time.Instant;

import dev.llmquota.test.simulator.dialect.Formats;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Wire value formats.
 */
class FormatsTests {

	@Test
	void writesGoDurationsLikeOpenAi() {
		assertThat(Formats.goDuration(Duration.ZERO)).isEqualTo("0s");
		assertThat(Formats.goDuration(Duration.ofMillis(12))).isEqualTo("12ms");
		assertThat(Formats.goDuration(Duration.ofNanos(11_500_000))).isEqualTo("12ms");
		assertThat(Formats.goDuration(Duration.ofMillis(57_904))).isEqualTo("57.904s");
		assertThat(Formats.goDuration(Duration.ofMinutes(6))).isEqualTo("6m0s");
		assertThat(Formats.goDuration(Duration.ofMillis(86_400))).isEqualTo("1m26.4s");
		assertThat(Formats.goDuration(Duration.ofMillis(3_888_000))).isEqualTo("1h4m48s");
		assertThat(Formats.goDuration(Duration.ofMillis(1185_394))).isEqualTo("19m45.394s");
	}

	@Test
	void writesRfc3339AtSecondResolutionRoundedUp() {
		assertThat(Formats.rfc3339(Instant.parse("2025-10-14T09:21:07.200Z"))).isEqualTo("2025-10-14T09:21:08Z");
		assertThat(Formats.rfc3339(Instant.parse("2025-10-14T09:21:07Z"))).isEqualTo("2025-10-14T09:21:07Z");
	}

	@Test
	void writesDecimalSecondsAndGroupedCounts() {
		assertThat(Formats.decimalSeconds(Duration.ofNanos(33_118_307_421L))).isEqualTo("33.118307421");
		assertThat(Formats.decimalSeconds(Duration.ofSeconds(25))).isEqualTo("25");
		assertThat(Formats.grouped(30_000)).isEqualTo("30,000");
	}

}
