/**
 * The simulator's quota books: per-model and per-account buckets, per-day caps and
 * concurrency gates, admitted as one conjunction.
 */
package dev.llmquota.test.simulator.quota;
