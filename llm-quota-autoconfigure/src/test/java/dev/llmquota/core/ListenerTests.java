package dev.llmquota.core;

import java.util.ArrayList;
import java.util.List;

import dev.llmquota.store.LocalQuotaStore;
import org.junit.jupiter.api.Test;

import static dev.llmquota.core.Dimension.REQUESTS_PER_MINUTE;
import static dev.llmquota.core.TestConfigs.limits;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Observers of the engine: told of what passes while registered, and of nothing once
 * removed.
 */
class ListenerTests {

	private final QuotaEngine engine = TestConfigs.provider()
		.inFlightGate(false)
		.model("gpt-4o", limits(REQUESTS_PER_MINUTE, 100))
		.template(limits(REQUESTS_PER_MINUTE, 100))
		.engine(new LocalQuotaStore(), new ManualClock());

	@Test
	void aRemovedListenerReceivesNothing() {
		Recorder kept = new Recorder();
		Recorder removed = new Recorder();
		this.engine.addListener(kept);
		this.engine.addListener(removed);
		Pool pool = this.engine.pool("openai", "gpt-4o");
		call(pool);
		assertThat(removed.events).as("told while registered").contains("admitted gpt-4o", "reconciled gpt-4o");
		removed.events.clear();
		kept.events.clear();
		this.engine.removeListener(removed);
		call(pool);
		this.engine.recordDrift(pool, 100, 120);
		this.engine.pool("openai", "o3");
		assertThat(removed.events).isEmpty();
		assertThat(kept.events).as("the other listener is still told")
			.contains("admitted gpt-4o", "reconciled gpt-4o", "drift gpt-4o", "created o3");
	}

	@Test
	void removingAListenerNeverAddedChangesNothing() {
		Recorder kept = new Recorder();
		this.engine.addListener(kept);
		this.engine.removeListener(new Recorder());
		call(this.engine.pool("openai", "gpt-4o"));
		assertThat(kept.events).contains("admitted gpt-4o");
	}

	private void call(Pool pool) {
		Calls.acquire(this.engine, pool, new Demand(10, 10)).permit().complete(new Usage(10, 0, 5));
	}

	private static final class Recorder implements QuotaEvents {

		private final List<String> events = new ArrayList<>();

		@Override
		public void poolCreated(Pool pool) {
			this.events.add("created " + pool.model());
		}

		@Override
		public void admitted(Pool pool, Priority priority, long waitedNanos) {
			this.events.add("admitted " + pool.model());
		}

		@Override
		public void reconciled(Pool pool, Demand demand, Usage usage, long reservedOutput, long billedOutput) {
			this.events.add("reconciled " + pool.model());
		}

		@Override
		public void drift(Pool pool, double ratio) {
			this.events.add("drift " + pool.model());
		}

	}

}
