/**
 * Apache HttpClient 5 support: its own retry of refusals is left to llm-quota for
 * governed calls.
 */
package dev.llmquota.client.httpcomponents;
