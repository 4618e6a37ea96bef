package dev.llmquota.client;

import java.time.Duration;

import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.Demand;
import dev.llmquota.core.Dimension;
import dev.llmquota.core.ManualClock;
import dev.llmquota.core.Pool;
import dev.llmquota.core.QuotaEngine;
import dev.llmquota.core.QuotaPermit;
import dev.llmquota.core.TestConfigs;
import dev.llmquota.store.LocalQuotaStore;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

import static dev.llmquota.core.TestConfigs.limits;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A permit taken at once reaches its call, or is given back whole: a caller that gives up
 * as it is granted (a timeout, a cancel) holds no slot and no tokens.
 */
class GrantedPermitTests {

	private final QuotaEngine engine = TestConfigs.provider()
		.headroom(1.0)
		.burstWindow(Duration.ofSeconds(60))
		.model("gpt-4o", limits(Dimension.TOKENS_PER_MINUTE, 1_000))
		.engine(new LocalQuotaStore(), new ManualClock());

	private final Pool pool = this.engine.pool("openai", "gpt-4o");

	@Test
	void aPermitWhoseCallerGaveUpBeforeItArrivedIsGivenBackWhole() {
		QuotaPermit permit = this.engine.tryAcquire(this.pool, new Demand(100, 100), null);
		assertThat(permit).isNotNull();
		assertThat(this.engine.inFlight(this.pool.account())).isOne();
		StepVerifier.create(LlmQuotaCalls.granted(permit), 0).thenCancel().verify();
		assertThat(this.engine.inFlight(this.pool.account())).isZero();
		assertThat(tokensRemaining()).isEqualTo(1_000);
	}

	@Test
	void aPermitThatArrivedStaysWithItsCall() {
		QuotaPermit permit = this.engine.tryAcquire(this.pool, new Demand(100, 100), null);
		StepVerifier.create(LlmQuotaCalls.granted(permit)).expectNext(permit).verifyComplete();
		assertThat(this.engine.inFlight(this.pool.account())).isOne();
		assertThat(tokensRemaining()).isEqualTo(800);
	}

	private long tokensRemaining() {
		return this.engine.snapshot(this.pool).bucket(BucketSpec.Scope.POOL, Dimension.TOKENS_PER_MINUTE).remaining();
	}

}
