/**
 * JUnit Jupiter support: the provider simulator as an extension.
 */
package dev.llmquota.test.junit;
