/**
 * Concurrency caps for running commands: one global cap
 * (`[limits] max_concurrent`) and an optional per-caller cap (HTTP clients).
 *
 * Beyond a cap the call is refused at once with `BUSY` rather than queued:
 * a queue would hold the model's request open for an unknown time and let one
 * client's backlog delay every other client's commands. Refusal is
 * predictable, costs nothing, and the model can simply retry.
 *
 * @module
 */

/** Releases a slot. Idempotent, so a `finally` and an abort path may both call it. */
export type Release = () => void;

export type AcquireResult =
  | { readonly ok: true; readonly release: Release }
  | { readonly ok: false; readonly reason: string };

export class ConcurrencyLimiter {
  readonly #globalCap: number;
  #running = 0;
  readonly #perKey = new Map<string, number>();

  /**
   * @param globalCap Maximum commands running at once across all callers.
   * @throws {RangeError} If `globalCap` is not a positive integer.
   */
  constructor(globalCap: number) {
    if (!Number.isInteger(globalCap) || globalCap < 1) {
      throw new RangeError(`globalCap must be a positive integer, got ${globalCap}`);
    }
    this.#globalCap = globalCap;
  }

  /** Number of commands running now. */
  get running(): number {
    return this.#running;
  }

  /**
   * Takes a slot if both the global cap and the caller's own cap allow it.
   *
   * @param key Caller identity for the per-caller cap, or null for none.
   * @param keyCap The caller's own cap (ignored when `key` is null).
   * @returns A release function, or the sentence saying which cap was hit.
   */
  tryAcquire(key: string | null, keyCap: number): AcquireResult {
    if (this.#running >= this.#globalCap) {
      return {
        ok: false,
        reason:
          `The server is already running ${this.#running} commands, its limit (limits.max_concurrent = ${this.#globalCap}); try again when one finishes.`,
      };
    }
    const held = key === null ? 0 : this.#perKey.get(key) ?? 0;
    if (key !== null && held >= keyCap) {
      return {
        ok: false,
        reason:
          `This client already has ${held} commands running, its limit (http.max_concurrent_per_client = ${keyCap}); try again when one finishes.`,
      };
    }
    this.#running++;
    if (key !== null) this.#perKey.set(key, held + 1);
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        this.#running--;
        if (key !== null) {
          const left = (this.#perKey.get(key) ?? 1) - 1;
          // Delete at zero so the map cannot grow with every client ever seen.
          if (left <= 0) this.#perKey.delete(key);
          else this.#perKey.set(key, left);
        }
      },
    };
  }
}
