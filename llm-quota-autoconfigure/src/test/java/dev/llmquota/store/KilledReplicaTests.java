package dev.llmquota.store;

import java.time.Duration;

import dev.llmquota.core.BucketSpec;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A replica killed with {@code kill -9}, in a process of its own, while it holds every
 * shared slot of an account: nothing is released, and the slots come back to the live
 * replicas when the dead one's leases expire, within one lease time. (On Redis Cluster:
 * {@link RedisClusterTests}.)
 */
@Tag("slow")
class KilledReplicaTests {

	@Test
	void aKilledReplicasSlotsComeBackWithinTheLeaseTime() throws Exception {
		Duration lease = Duration.ofSeconds(2);
		EmbeddedRedis redis = EmbeddedRedis.shared();
		String key = "llmq:{killed-" + System.nanoTime() + "}:account:concurrent-requests";
		BucketSpec slot = SlotHolder.slot(key, 3);
		Process holder = SlotHolder.start("standalone", "127.0.0.1:" + redis.port(), key, "3",
				Long.toString(lease.toMillis()));
		LettuceConnectionFactory connectionFactory = redis.connectionFactory();
		RedisQuotaStore live = new RedisQuotaStore(connectionFactory,
				new RedisQuotaStore.Settings(RedisQuotaStore.OnFailure.REJECT, 0.5, lease, Duration.ofSeconds(2)));
		try {
			Duration back = SlotHolder.killAndTimeTheSlotsReturn(holder, live, slot);
			// the dead replica renewed a third of a lease time before it died, at most
			assertThat(back).as("slots back after the kill").isLessThanOrEqualTo(lease.plusMillis(500));
		}
		finally {
			holder.destroyForcibly();
			live.close();
			connectionFactory.destroy();
		}
	}

}
