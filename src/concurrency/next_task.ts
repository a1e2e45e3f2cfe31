/**
 * One macrotask's wait, for long synchronous work that must let the event
 * loop serve everyone else between its steps.
 *
 * @module
 */
import { sleep } from "../timers/mod.ts";

/**
 * Resolves after one macrotask, once pending timers and I/O have had their
 * turn. A zero-delay timer: Deno delivers `MessageChannel` messages ahead of
 * timers, so that cheaper-looking wait starves every timer (measured).
 */
export function nextTask(): Promise<void> {
  return sleep(0);
}
