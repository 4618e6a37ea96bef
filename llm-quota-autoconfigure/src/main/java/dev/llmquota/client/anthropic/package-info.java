/**
 * The adapter of Anthropic's Java SDK: an interceptor its client applies to every
 * attempt.
 */
package dev.llmquota.client.anthropic;
