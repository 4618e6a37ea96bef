/**
 * The RestClient adapter: a blocking request interceptor and the customizer that adds it.
 */
package dev.llmquota.client.restclient;
