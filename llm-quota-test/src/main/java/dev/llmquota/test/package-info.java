/**
 * Test support for llm-quota: a provider simulator and helpers, independent of the
 * engine.
 */
package dev.llmquota.test;
