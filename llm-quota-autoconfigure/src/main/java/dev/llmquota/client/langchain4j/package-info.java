/**
 * The LangChain4j adapter: a governed implementation of its HTTP client SPI, passed to a
 * model's builder.
 */
package dev.llmquota.client.langchain4j;
