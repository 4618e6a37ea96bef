/**
 * The providers' wire dialects.
 */
package dev.llmquota.provider;
