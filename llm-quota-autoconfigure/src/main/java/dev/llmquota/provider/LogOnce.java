package dev.llmquota.provider;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Logs a problem with what a provider or a caller sent once at WARN, then at DEBUG, so a
 * stream of bad input cannot flood the log while the first occurrence is always seen.
 */
public final class LogOnce {

	private static final Log logger = LogFactory.getLog(LogOnce.class);

	private static final Set<String> seen = ConcurrentHashMap.newKeySet();

	private LogOnce() {
	}

	/**
	 * Logs a problem.
	 * @param key what kind of problem, for example {@code openai: unreadable usage}
	 * @param message the message, with what llm-quota does instead
	 */
	public static void warn(String key, String message) {
		if (seen.add(key)) {
			logger.warn(message + " (logged once; later occurrences at DEBUG)");
		}
		else if (logger.isDebugEnabled()) {
			logger.debug(message);
		}
	}

}
