package dev.llmquota.test.simulator.dialect;

/**
 * A request the dialect cannot read; answered with the dialect's own 400 format.
 */
public class BadRequestException extends RuntimeException {

	/**
	 * Creates the exception.
	 * @param message what is wrong, shown to the caller
	 */
	public BadRequestException(String message) {
		super(message);
	}

}
