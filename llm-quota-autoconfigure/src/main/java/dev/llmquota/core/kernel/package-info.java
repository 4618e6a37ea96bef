/**
 * The engine's kernel: bucket arithmetic with exact integer math and no clock of its own
 * (every operation takes the time), imports nothing outside {@code java.*} and this
 * package, and holds no locks; callers serialise access. Unit-tested against an exact
 * reference with seeded generators.
 */
package dev.llmquota.core.kernel;
