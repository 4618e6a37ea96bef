package dev.llmquota.test.simulator.clock;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The manual clock's waits.
 */
class ManualSimClockTests {

	private final ManualSimClock clock = new ManualSimClock();

	@Test
	void releasesAWaitOnceItsDeadlinePasses() {
		AtomicBoolean done = new AtomicBoolean();
		this.clock.awaitNanos(1_000).subscribe(null, null, () -> done.set(true));
		assertThat(this.clock.pendingWaits()).isEqualTo(1);
		this.clock.advance(Duration.ofNanos(999));
		assertThat(done).isFalse();
		this.clock.advance(Duration.ofNanos(1));
		assertThat(done).isTrue();
		assertThat(this.clock.pendingWaits()).isZero();
	}

	@Test
	void forgetsAWaitWhoseSubscriberCancelled() {
		Disposable first = this.clock.awaitNanos(1_000).subscribe();
		this.clock.awaitNanos(2_000).subscribe();
		assertThat(this.clock.pendingWaits()).isEqualTo(2);
		first.dispose();
		assertThat(this.clock.pendingWaits()).isEqualTo(1);
	}

	@Test
	void doesNotWaitForADeadlineAlreadyPassed() {
		this.clock.advance(Duration.ofSeconds(1));
		AtomicBoolean done = new AtomicBoolean();
		this.clock.awaitNanos(1_000).subscribe(null, null, () -> done.set(true));
		assertThat(done).isTrue();
		assertThat(this.clock.pendingWaits()).isZero();
	}

}
