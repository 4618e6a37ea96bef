package dev.llmquota.store;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.llmquota.core.Booking;
import dev.llmquota.core.BookingRequest;
import dev.llmquota.core.BucketSpec;
import dev.llmquota.core.Dimension;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A replica in a process of its own, for tests that kill one with {@code kill -9}: it
 * opens the Redis store (on Redis's clock, renewing its leases as a live replica does),
 * takes every shared slot of one bucket, says {@code HOLDING} and waits to be killed (or
 * for the test's JVM to go).
 * <p>
 * Arguments: {@code standalone|cluster}, the nodes ({@code host:port}, comma-separated),
 * the slot bucket's key, its capacity, the lease time in milliseconds.
 */
public final class SlotHolder {

	static final String HOLDING = "HOLDING";

	private SlotHolder() {
	}

	public static void main(String[] args) throws IOException {
		List<String> nodes = List.of(args[1].split(","));
		LettuceConnectionFactory factory;
		if (args[0].equals("cluster")) {
			factory = new LettuceConnectionFactory(new RedisClusterConfiguration(nodes));
		}
		else {
			String[] node = nodes.get(0).split(":");
			factory = new LettuceConnectionFactory(
					new RedisStandaloneConfiguration(node[0], Integer.parseInt(node[1])));
		}
		factory.afterPropertiesSet();
		factory.start();
		RedisQuotaStore store = new RedisQuotaStore(factory,
				new RedisQuotaStore.Settings(RedisQuotaStore.OnFailure.REJECT, 0.5,
						Duration.ofMillis(Long.parseLong(args[4])), Duration.ofSeconds(2)));
		BucketSpec slot = slot(args[2], Long.parseLong(args[3]));
		for (long i = 0; i < slot.capacity(); i++) {
			Booking booking = bookOne(store, slot);
			if (!(booking instanceof Booking.Booked)) {
				System.out.println("not booked: " + booking);
				System.exit(1);
			}
		}
		System.out.println(HOLDING);
		System.out.flush();
		// Held until killed; should the test's JVM die first, its end of this pipe
		// closes and the holder exits rather than linger with its leases.
		while (System.in.read() != -1) {
			// the test writes nothing
		}
		System.exit(0);
	}

	/** The shared in-flight bucket both the holder and the test book. */
	static BucketSpec slot(String key, long capacity) {
		return new BucketSpec(key, BucketSpec.Scope.ACCOUNT, Dimension.CONCURRENT_REQUESTS, capacity, capacity,
				ZoneOffset.UTC);
	}

	/**
	 * Starts a holder in a JVM of its own, on this JVM's class path, and returns once it
	 * holds every slot.
	 * @param args the holder's arguments
	 * @return its process, to kill
	 */
	static Process start(String... args) {
		List<String> command = new ArrayList<>(List.of(
				Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx128m",
				"-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), SlotHolder.class.getName()));
		command.addAll(List.of(args));
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
			BufferedReader output = new BufferedReader(
					new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
			// read to the end, so a holder that logs never blocks on a full pipe
			CompletableFuture<String> holding = new CompletableFuture<>();
			Thread reader = new Thread(() -> {
				StringBuilder seen = new StringBuilder();
				try {
					for (String line = output.readLine(); line != null; line = output.readLine()) {
						if (line.equals(HOLDING)) {
							holding.complete(HOLDING);
						}
						else if (!holding.isDone()) {
							seen.append(line).append('\n');
						}
					}
				}
				catch (IOException ex) {
					// the holder is gone
				}
				holding.complete(seen.toString());
			}, "slot-holder-output");
			reader.setDaemon(true);
			reader.start();
			String said = holding.get(60, TimeUnit.SECONDS);
			if (!said.equals(HOLDING)) {
				process.destroyForcibly();
				throw new IllegalStateException("The slot holder did not take the slots:\n" + said);
			}
			return process;
		}
		catch (Exception ex) {
			throw new IllegalStateException("Could not start a slot holder", ex);
		}
	}

	/**
	 * Kills a holder as {@code kill -9} does (it releases nothing), and returns how long
	 * until a live replica's store books one of the slots it held.
	 * @param holder the holder's process
	 * @param live a live replica's store, on Redis's clock
	 * @param slot the bucket the holder filled
	 * @return the time from the kill to the first booking
	 */
	static Duration killAndTimeTheSlotsReturn(Process holder, RedisQuotaStore live, BucketSpec slot)
			throws InterruptedException {
		assertThat(bookOne(live, slot)).as("the holder has every slot").isInstanceOf(Booking.Refused.class);
		long killed = System.nanoTime();
		holder.destroyForcibly();
		holder.waitFor(30, TimeUnit.SECONDS);
		await().atMost(Duration.ofSeconds(30))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> bookOne(live, slot) instanceof Booking.Booked);
		return Duration.ofNanos(System.nanoTime() - killed);
	}

	private static Booking bookOne(RedisQuotaStore store, BucketSpec slot) {
		return store.book(new BookingRequest(List.of(), List.of(slot), List.of(), null), System.nanoTime(),
				Instant.now(), Long.MAX_VALUE);
	}

}
