/**
 * Running the simulator on its own: YAML configuration and the command line.
 */
package dev.llmquota.test.simulator.standalone;
