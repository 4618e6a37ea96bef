package dev.llmquota.actuate;

import java.util.List;

import dev.llmquota.core.ManualClock;
import dev.llmquota.core.Mode;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.core.TestConfigs;
import dev.llmquota.store.LocalQuotaStore;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import static dev.llmquota.core.Dimension.TOKENS_PER_MINUTE;
import static dev.llmquota.core.TestConfigs.limits;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * States of the {@code llmQuota} health component.
 */
class LlmQuotaHealthIndicatorTests {

	private final ManualClock clock = new ManualClock();

	private QuotaEngine engine(LocalQuotaStore store) {
		return TestConfigs.provider()
			.model("gpt-4o", limits(TOKENS_PER_MINUTE, 30_000))
			.model("o3", limits(TOKENS_PER_MINUTE, 30_000))
			.engine(store, this.clock);
	}

	@Test
	void upWithPoolsListedByState() {
		QuotaEngine engine = engine(new LocalQuotaStore());
		Health health = new LlmQuotaHealthIndicator(engine, Status.OUT_OF_SERVICE).health(true);
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(health.getDetails()).containsEntry("EXHAUSTED", List.of()).containsEntry("THROTTLED", List.of());
		assertThat(health.getDetails().get("OK")).asInstanceOf(InstanceOfAssertFactories.LIST)
			.containsExactlyInAnyOrder("openai/gpt-4o", "openai/o3");
		assertThat(health.getDetails().get("store")).asInstanceOf(InstanceOfAssertFactories.MAP)
			.containsEntry("backend", "local")
			.containsEntry("reachable", true);
	}

	@Test
	void anExhaustedPoolTakesTheConfiguredStatus() {
		QuotaEngine engine = engine(new LocalQuotaStore());
		engine.exhaust(engine.pool("openai", "o3"), false, null, "spent", null);
		assertThat(new LlmQuotaHealthIndicator(engine, Status.UP).health(true).getStatus()).isEqualTo(Status.UP);
		Health health = new LlmQuotaHealthIndicator(engine, Status.OUT_OF_SERVICE).health(true);
		assertThat(health.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
		assertThat(health.getDetails()).containsEntry("EXHAUSTED", List.of("openai/o3"));
	}

	/**
	 * A pool in shadow mode holds back no call: its spent quota is listed, but does not
	 * take the instance out of service; a shadow rollout changes nothing a load balancer
	 * sees.
	 */
	@Test
	void aPoolInShadowModeDoesNotChangeTheStatus() {
		QuotaEngine engine = TestConfigs.provider()
			.mode(Mode.SHADOW)
			.model("gpt-4o", limits(TOKENS_PER_MINUTE, 30_000))
			.engine(new LocalQuotaStore(), this.clock);
		engine.exhaust(engine.pool("openai", "gpt-4o"), false, null, "spent", null);
		Health health = new LlmQuotaHealthIndicator(engine, Status.OUT_OF_SERVICE).health(true);
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(health.getDetails()).containsEntry("EXHAUSTED", List.of("openai/gpt-4o"));
	}

}
