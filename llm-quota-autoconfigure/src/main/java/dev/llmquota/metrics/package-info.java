/**
 * Micrometer meters of llm-quota.
 */
package dev.llmquota.metrics;
