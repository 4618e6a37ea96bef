/**
 * One class per provider dialect: request reading, response, stream, header and error
 * formats on the wire.
 */
package dev.llmquota.test.simulator.dialect;
