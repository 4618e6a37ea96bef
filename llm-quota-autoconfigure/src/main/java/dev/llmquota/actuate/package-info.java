/**
 * The {@code llmquota} actuator endpoint and the {@code llmQuota} health indicator.
 */
package dev.llmquota.actuate;
