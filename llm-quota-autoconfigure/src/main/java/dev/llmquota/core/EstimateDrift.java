package dev.llmquota.core;

/**
 * How far input estimates are from what the provider counts, per pool: an exponentially
 * weighted ratio of actual to estimated input tokens, applied to later estimates so an
 * under-estimate does not persist. Thread-safe.
 */
public final class EstimateDrift {

	/**
	 * The correction never shrinks an estimate below half or grows it beyond four times.
	 */
	static final double MIN_FACTOR = 0.5;

	static final double MAX_FACTOR = 4.0;

	private double ratio = 1.0;

	private double lastRatio = Double.NaN;

	private long samples;

	/**
	 * Records one call's estimate and the provider's count.
	 * @param estimated the raw estimate (before correction)
	 * @param actual the input tokens the provider reported
	 * @return the ratio of this call, actual / estimated, or {@code NaN} if nothing was
	 * estimated
	 */
	synchronized double record(long estimated, long actual) {
		if (estimated <= 0) {
			return Double.NaN;
		}
		double sample = (double) actual / estimated;
		this.lastRatio = sample;
		// one call far off (input the estimator could not see) moves the ratio no
		// further than the correction goes
		double bounded = Math.max(MIN_FACTOR, Math.min(MAX_FACTOR, sample));
		this.ratio = (this.samples == 0) ? bounded : this.ratio + (bounded - this.ratio) * 0.2;
		this.samples++;
		return sample;
	}

	/**
	 * Returns an estimate corrected by the drift seen so far.
	 * @param estimated a raw estimate
	 * @return the corrected estimate
	 */
	public synchronized long correct(long estimated) {
		double factor = Math.max(MIN_FACTOR, Math.min(MAX_FACTOR, this.ratio));
		return (long) Math.ceil(estimated * factor);
	}

	/**
	 * Returns the current correction ratio (actual / estimated, weighted).
	 * @return the ratio, 1 until a call reported usage
	 */
	public synchronized double ratio() {
		return this.ratio;
	}

	/**
	 * Returns the ratio of the last call that reported usage.
	 * @return the ratio, or {@code NaN}
	 */
	public synchronized double lastRatio() {
		return this.lastRatio;
	}

	/**
	 * Returns how many calls reported usage.
	 * @return the number of samples
	 */
	public synchronized long samples() {
		return this.samples;
	}

}
