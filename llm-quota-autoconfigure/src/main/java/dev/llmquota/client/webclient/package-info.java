/**
 * The WebClient adapter: an exchange filter and the customizer that adds it.
 */
package dev.llmquota.client.webclient;
