/**
 * Auto-configuration of llm-quota: properties, their validation, and the engine's beans.
 */
package dev.llmquota.autoconfigure;
