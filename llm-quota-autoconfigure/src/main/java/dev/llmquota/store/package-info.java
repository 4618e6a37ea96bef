/**
 * Where bucket state lives: the in-process store.
 */
package dev.llmquota.store;
