package dev.llmquota.core.kernel;

import java.math.BigInteger;

/**
 * Saturating integer arithmetic for the bucket math, so extreme values clamp instead of
 * wrapping around.
 */
public final class Arith {

	public static final long NANOS_PER_MINUTE = 60_000_000_000L;

	private Arith() {
	}

	public static long saturatedAdd(long a, long b) {
		long r = a + b;
		if (((a ^ r) & (b ^ r)) < 0) {
			return (a < 0) ? Long.MIN_VALUE : Long.MAX_VALUE;
		}
		return r;
	}

	/**
	 * Returns {@code floor(a * b / c)} for non-negative operands, saturating at
	 * {@link Long#MAX_VALUE}.
	 */
	public static long mulDiv(long a, long b, long c) {
		long high = Math.multiplyHigh(a, b);
		long low = a * b;
		if (high == 0 && low >= 0) {
			return low / c;
		}
		return clamp(BigInteger.valueOf(a).multiply(BigInteger.valueOf(b)).divide(BigInteger.valueOf(c)));
	}

	/**
	 * Returns {@code ceil(a * b / c)} for non-negative operands, saturating at
	 * {@link Long#MAX_VALUE}.
	 */
	public static long mulDivCeil(long a, long b, long c) {
		long high = Math.multiplyHigh(a, b);
		long low = a * b;
		if (high == 0 && low >= 0) {
			return low / c + ((low % c == 0) ? 0 : 1);
		}
		BigInteger[] qr = BigInteger.valueOf(a)
			.multiply(BigInteger.valueOf(b))
			.divideAndRemainder(BigInteger.valueOf(c));
		return clamp(qr[1].signum() == 0 ? qr[0] : qr[0].add(BigInteger.ONE));
	}

	private static long clamp(BigInteger value) {
		return (value.bitLength() < 63) ? value.longValue() : Long.MAX_VALUE;
	}

}
