/**
 * One macrotask's wait, for long synchronous work that must let the event
 * loop serve everyone else between its steps.
 *
 * @module
 */

/**
 * Resolves after one macrotask, once pending timers and I/O have had their
 * turn. A zero `setTimeout`: Deno delivers `MessageChannel` messages ahead of
 * timers, so that cheaper-looking wait starves every timer (measured). Runs
 * of such waits are clamped to about 4 ms each, idle time in which the
 * event loop serves everyone else.
 */
export function nextTask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
