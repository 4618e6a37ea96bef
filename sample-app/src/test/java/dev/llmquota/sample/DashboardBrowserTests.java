package dev.llmquota.sample;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dashboard in a real headless browser (Debian's chromium, driven through its
 * chromedriver; nothing is downloaded) while the demo's batch runs: the page shows the
 * pool, its dimensions as bars and the binding one highlighted, and it updates. The
 * screenshot it takes is the one the README shows.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "demo.run-batch=true", "demo.rounds=1", "demo.documents=30", "demo.workers=16",
				"demo.simulator.requests-per-minute=300", "demo.simulator.tokens-per-minute=30000",
				"demo.simulator.time-to-first-token=200ms", "demo.progress-interval=5s" })
@ActiveProfiles("demo")
class DashboardBrowserTests {

	private static final Path CHROMIUM = Path.of("/usr/bin/chromium");

	private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");

	private static final int SIMULATOR_PORT = freePort();

	@DynamicPropertySource
	static void simulatorPort(DynamicPropertyRegistry registry) {
		registry.add("demo.simulator.port", () -> SIMULATOR_PORT);
	}

	@LocalServerPort
	private int port;

	private WebDriver browser;

	@BeforeEach
	void openTheBrowser(@TempDir Path profile) {
		assertThat(CHROMIUM).as("Debian's chromium; ./scripts/test.sh installs it (apt-get install chromium)").exists();
		assertThat(CHROMEDRIVER)
			.as("Debian's chromium-driver; ./scripts/test.sh installs it (apt-get install chromium-driver)")
			.exists();
		ChromeOptions options = new ChromeOptions();
		options.setBinary(CHROMIUM.toFile());
		// as root, without a display, on a machine whose network is closed
		options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
				"--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
				"--disable-sync", "--window-size=1100,1000", "--user-data-dir=" + profile);
		ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile())
			.build();
		this.browser = new ChromeDriver(service, options);
	}

	@AfterEach
	void closeTheBrowser() {
		if (this.browser != null) {
			this.browser.quit();
		}
	}

	@Test
	void theDashboardShowsThePoolsAndTheBindingDimensionAndUpdates() throws IOException {
		this.browser.get("http://127.0.0.1:" + this.port + "/");
		// the page redraws itself every quarter second: read it afresh each time
		WebDriverWait wait = new WebDriverWait(this.browser, Duration.ofSeconds(20));
		wait.ignoring(StaleElementReferenceException.class);
		String pool = "[data-pool='openai/gpt-4o-mini']";
		List<String> dimensions = wait.until((driver) -> {
			List<String> found = driver.findElements(By.cssSelector(pool + " .dimension"))
				.stream()
				.map((row) -> row.getAttribute("data-dimension"))
				.toList();
			return found.isEmpty() ? null : found;
		});
		assertThat(dimensions).contains("requests-per-minute", "tokens-per-minute");
		wait.until((driver) -> !driver.findElements(By.cssSelector(pool + " .dimension .bar .remaining")).isEmpty());
		// calls of very different sizes: the token bucket admits the fewest
		wait.until((driver) -> !driver
			.findElements(By.cssSelector(pool + " .dimension.binding[data-dimension='tokens-per-minute']"))
			.isEmpty());
		int polls = polls();
		wait.until((driver) -> polls() >= polls + 2);
		wait.until((driver) -> driver.findElement(By.id("batch")).getText().contains("documents done"));
		String state = wait.until((driver) -> driver.findElement(By.cssSelector(pool + " .state")).getText());
		assertThat(state).isIn("OK", "THROTTLED");
		screenshot();
	}

	private int polls() {
		return Integer.parseInt(this.browser.findElement(By.id("updated")).getAttribute("data-polls"));
	}

	/**
	 * Saves the page in {@code target/dashboard.png}; with
	 * {@code -Dllmquota.screenshot=update}, also as the README's
	 * {@code docs/dashboard.png}.
	 */
	private void screenshot() throws IOException {
		byte[] png = ((ChromeDriver) this.browser).getScreenshotAs(OutputType.BYTES);
		Files.write(Path.of("target", "dashboard.png"), png);
		File docs = new File("../docs");
		if ("update".equals(System.getProperty("llmquota.screenshot")) && docs.isDirectory()) {
			Files.write(docs.toPath().resolve("dashboard.png"), png);
		}
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
