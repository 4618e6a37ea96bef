/**
 * llm-quota's public exceptions.
 */
package dev.llmquota;
