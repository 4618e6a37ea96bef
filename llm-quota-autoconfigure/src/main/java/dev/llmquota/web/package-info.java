/**
 * What a web application answers when an llm-quota exception escapes a controller.
 */
package dev.llmquota.web;
