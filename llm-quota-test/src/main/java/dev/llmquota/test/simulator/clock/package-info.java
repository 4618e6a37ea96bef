/**
 * The simulator's own clock: monotonic nanoseconds, a wall instant and waits on that
 * time.
 */
package dev.llmquota.test.simulator.clock;
