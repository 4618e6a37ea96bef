/**
 * Governing provider calls, the same for every HTTP stack: routing, planning, admission
 * and following the answer.
 */
package dev.llmquota.client;
