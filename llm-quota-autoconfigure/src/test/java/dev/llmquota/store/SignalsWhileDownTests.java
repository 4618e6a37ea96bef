package dev.llmquota.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a replica keeps to tell Redis when it answers again: the latest spent quota or
 * reset of a hold, but the penalty that ends last (a shorter one heard later does not
 * shorten it), each wait shortened by the time it was kept, and each signal sent once.
 */
class SignalsWhileDownTests {

	private static final long SECOND = Duration.ofSeconds(1).toNanos();

	private final SignalsWhileDown signals = new SignalsWhileDown();

	private final List<QuotaScript.Call> sent = new ArrayList<>();

	private static QuotaScript.Call call(String what, long waited) {
		return new QuotaScript.Call(List.of("hold"), List.of(what, Long.toString(waited)));
	}

	@Test
	void aLongerPenaltyHeardFirstIsNotShortenedByAShorterOneHeardLater() {
		this.signals.keepLongest("penalty", 0, 60 * SECOND,
				(waited) -> (waited < 60 * SECOND) ? call("60 s", waited) : null);
		this.signals.keepLongest("penalty", SECOND, 2 * SECOND,
				(waited) -> (waited < 2 * SECOND) ? call("2 s", waited) : null);
		this.signals.sendAll(10 * SECOND, this.sent::add);
		assertThat(this.sent).containsExactly(call("60 s", 10 * SECOND));
	}

	@Test
	void theLatestSpentQuotaOrResetOfAHoldStandsAndIsSentOnce() {
		this.signals.keepLatest("exhaustion", 0, (waited) -> call("exhaust", waited));
		this.signals.keepLatest("exhaustion", SECOND, (waited) -> call("clear", waited));
		this.signals.sendAll(3 * SECOND, this.sent::add);
		this.signals.sendAll(4 * SECOND, this.sent::add);
		assertThat(this.sent).containsExactly(call("clear", 2 * SECOND));
	}

	@Test
	void aSignalSentOnceRedisAnswersDropsTheOneKeptForItsKey() {
		this.signals.keepLatest("exhaustion", 0, (waited) -> call("exhaust", waited));
		this.signals.drop("exhaustion");
		this.signals.sendAll(SECOND, this.sent::add);
		assertThat(this.sent).isEmpty();
	}

}
