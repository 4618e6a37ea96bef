/**
 * The OkHttp adapter: an interceptor for OkHttp clients, such as Spring AI's SDK clients.
 */
package dev.llmquota.client.okhttp;
