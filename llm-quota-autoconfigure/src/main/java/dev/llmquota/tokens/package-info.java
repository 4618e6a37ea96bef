/**
 * Input token estimators: BPE encodings and a characters-per-token heuristic.
 */
package dev.llmquota.tokens;
