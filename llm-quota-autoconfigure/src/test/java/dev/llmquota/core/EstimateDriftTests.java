package dev.llmquota.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The correction of input estimates from the provider's counts.
 */
class EstimateDriftTests {

	/**
	 * One call whose input the estimator could not see (500 times its estimate) moves the
	 * ratio only as far as the correction goes, so calls after it are back near their
	 * estimate within a few calls rather than twenty.
	 */
	@Test
	void oneCallFarOffMovesTheRatioNoFurtherThanTheCorrectionGoes() {
		EstimateDrift drift = new EstimateDrift();
		assertThat(drift.record(16, 8_231)).as("the call's own ratio, as the endpoint shows it").isGreaterThan(500);
		assertThat(drift.ratio()).isEqualTo(EstimateDrift.MAX_FACTOR);
		for (int i = 0; i < 5; i++) {
			drift.record(1_000, 1_000);
		}
		assertThat(drift.ratio()).isLessThan(2.0);
		assertThat(drift.correct(1_000)).isLessThan(2_000);
	}

}
