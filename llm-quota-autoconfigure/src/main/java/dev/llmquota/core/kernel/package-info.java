/**
 * The engine's kernel: the admission rules ({@link dev.llmquota.core.kernel.Admission}),
 * written once for the local and the shared store, and the bucket arithmetic with exact
 * integer math. No clock of its own (every operation takes the time), no locks, no
 * timers; imports nothing outside {@code java.*} and this package. Callers serialise
 * access. Unit-tested against exact references and invariants with seeded generators.
 */
package dev.llmquota.core.kernel;
