/**
 * The quota engine: dimensions, token-bucket math, pools, accounts, reservations and the
 * admission queue; no Spring and no HTTP.
 */
package dev.llmquota.core;
