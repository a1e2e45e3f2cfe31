/**
 * How many commands may run at once: the global and per-caller caps, and the
 * bounded, fair queue in front of them (`docs/queueing.md`).
 *
 * @example A cap of one: the second caller is refused while the first holds the slot
 * ```ts
 * import { ConcurrencyLimiter } from "./mod.ts";
 *
 * const limiter = new ConcurrencyLimiter(1);
 * const first = limiter.tryAcquire("client-a", 1);
 * const second = limiter.tryAcquire("client-b", 1);
 * console.assert(first.ok && !second.ok);
 * if (first.ok) first.release();
 * ```
 *
 * @module
 */
export {
  type AcquireResult,
  type CallerKey,
  ConcurrencyLimiter,
  NO_QUEUE,
  type QueueLimits,
  type Release,
} from "./limiter.ts";
export { nextTask } from "./next_task.ts";
