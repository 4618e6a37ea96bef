/**
 * The adapter of the AWS SDK for Java 2 (Bedrock): decorators of the HTTP clients its
 * service clients are built with.
 */
package dev.llmquota.client.aws;
