/**
 * The provider simulator: a loopback LLM endpoint that meters, answers and refuses like
 * the real providers.
 */
package dev.llmquota.test.simulator;
