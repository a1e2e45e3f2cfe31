/**
 * Timers: every delay, timeout, interval and sleep of the server, on one
 * scheduler over the runtime's own timers (`schedule.ts` says why not
 * `setTimeout`). `deno task check` fails on a `setTimeout`, `setInterval`
 * or `Deno.unrefTimer` anywhere else in `src/`.
 *
 * @example A sweeper that must not keep a finished process alive
 * ```ts
 * import { every } from "./mod.ts";
 *
 * const sweeper = every(60_000, () => console.log("sweep"), { keepAlive: false });
 * sweeper.cancel();
 * ```
 *
 * @module
 */
export { after, every, pendingTimers, sleep, type Timer, type TimerOptions } from "./schedule.ts";
