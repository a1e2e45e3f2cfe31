/**
 * Concurrency caps for running commands: one global cap
 * (`[limits] max_concurrent`) and an optional per-caller cap (HTTP clients),
 * with a bounded, fair waiting queue in front of them.
 *
 * A call beyond a cap waits instead of being refused at once: under load an
 * instant `BUSY` turns most calls into retries the model has to make itself.
 * The queue is built so that waiting cannot become a weapon:
 *
 * - Round-robin across callers: when a slot frees, the caller served least
 *   recently goes first, so one client's backlog of a hundred calls delays
 *   another client's call by at most one turn per caller, never by the whole
 *   backlog.
 * - Bounded in time (`limits.queue_wait_ms`): a call that has not started by
 *   then is refused with `BUSY`, its queue position and the limit in the reason.
 * - Bounded in length (`limits.queue_max`): when full, a caller with fewer
 *   waiting calls than the caller holding the most takes that caller's newest
 *   place, so a flood cannot keep others out of the queue either.
 * - Cancellable: an aborted signal removes the call from the queue at once;
 *   a call that never got a slot holds none, so nothing can leak.
 *
 * A waiting call has done nothing yet: it holds no slot and no audit record;
 * its caller writes the attempt when it starts, or the refusal when it does not.
 *
 * @module
 */
import { after } from "../timers/mod.ts";

/** Releases a slot. Idempotent, so a `finally` and an abort path may both call it. */
export type Release = () => void;

/**
 * A slot, or why there is none. Both carry `queuedMs`, the time the call
 * waited in the queue (0 when it never waited), which the caller reports.
 * A refusal is a value, never a throw: the tool answers it to the model.
 */
export type AcquireResult =
  | { readonly ok: true; readonly release: Release; readonly queuedMs: number }
  | {
    readonly ok: false;
    /** `BUSY` when a cap, the queue bound or the wait bound refused; `CANCELLED` when the signal did. */
    readonly code: "BUSY" | "CANCELLED";
    readonly reason: string;
    readonly queuedMs: number;
  };

/** The waiting queue's bounds; `max: 0` or `waitMs: 0` refuse at once, as without a queue. */
export interface QueueLimits {
  /** `limits.queue_max`: calls that may wait at once, across all callers. */
  readonly max: number;
  /** `limits.queue_wait_ms`: the longest a call waits for a slot. */
  readonly waitMs: number;
  /** Told how long each call that waited did wait, however its wait ended (telemetry). */
  readonly onWaited?: (ms: number) => void;
}

/** No queue: every call beyond a cap is refused at once. */
export const NO_QUEUE: QueueLimits = Object.freeze({ max: 0, waitMs: 0 });

/**
 * Who a call belongs to, for the per-caller cap and the round-robin: the
 * caller's OAuth client id, or null when it has none (stdio, HTTP without
 * authentication), which all share one line and no per-caller cap.
 */
export type CallerKey = string | null;

const STOPPING = "The server is stopping; the call did not start.";

interface Waiter {
  readonly key: CallerKey;
  readonly keyCap: number;
  readonly enqueuedAt: number;
  settle(result: AcquireResult): void;
}

/**
 * The caps and the fair queue of one server process (`context.limiter`):
 * every command takes a slot before it runs and releases it when it has
 * ended, so no more than `globalCap` run at once, nor more than its own cap
 * for one caller.
 */
export class ConcurrencyLimiter {
  readonly #globalCap: number;
  readonly #queue: QueueLimits;
  #running = 0;
  readonly #perKey = new Map<CallerKey, number>();
  /**
   * Waiting calls by caller. The map's order is the service order: a caller
   * that is served moves to the back, so iteration is round-robin.
   */
  readonly #waiting = new Map<CallerKey, Waiter[]>();
  #waitingCount = 0;
  #closed = false;

  /**
   * Creates a limiter with no slot taken and no call waiting.
   *
   * @param globalCap Maximum commands running at once across all callers.
   * @param queue The waiting queue's bounds (none by default).
   * @throws {RangeError} If `globalCap` is not a positive integer, or a queue bound is negative.
   */
  constructor(globalCap: number, queue: QueueLimits = NO_QUEUE) {
    if (!Number.isInteger(globalCap) || globalCap < 1) {
      throw new RangeError(`globalCap must be a positive integer, got ${globalCap}`);
    }
    if (!Number.isInteger(queue.max) || queue.max < 0) {
      throw new RangeError(`queue.max must be a non-negative integer, got ${queue.max}`);
    }
    if (!Number.isInteger(queue.waitMs) || queue.waitMs < 0) {
      throw new RangeError(`queue.waitMs must be a non-negative integer, got ${queue.waitMs}`);
    }
    this.#globalCap = globalCap;
    this.#queue = Object.freeze({ ...queue });
  }

  /** Number of commands running now. */
  get running(): number {
    return this.#running;
  }

  /** Number of calls waiting for a slot now. */
  get waiting(): number {
    return this.#waitingCount;
  }

  /**
   * Takes a slot now, or refuses: never waits. Calls already waiting are
   * ahead, so this refuses while any of them could be served by a free slot.
   *
   * @param key Caller identity for the per-caller cap, or null for none.
   * @param keyCap The caller's own cap (ignored when `key` is null).
   * @returns A release function, or the sentence saying which cap was hit.
   */
  tryAcquire(key: CallerKey, keyCap: number): AcquireResult {
    const blocked = this.#blockedBy(key, keyCap);
    if (blocked !== null) return { ok: false, code: "BUSY", reason: blocked, queuedMs: 0 };
    if (this.#waitingCount > 0 && this.#queueHolds(key)) {
      return {
        ok: false,
        code: "BUSY",
        reason:
          `${this.#waitingCount} call(s) are waiting for a slot already (limits.max_concurrent = ${this.#globalCap}); try again when they have started.`,
        queuedMs: 0,
      };
    }
    return { ok: true, release: this.#take(key), queuedMs: 0 };
  }

  /**
   * Takes a slot, waiting for one in the fair queue if a cap is reached.
   *
   * @param key Caller identity for the per-caller cap and the round-robin, or null for one shared caller.
   * @param keyCap The caller's own cap (ignored when `key` is null).
   * @param signal Aborts the wait (the call is then `CANCELLED`, holding nothing).
   * @returns A release function with the time spent waiting, or `BUSY`/`CANCELLED` with its sentence.
   */
  acquire(key: CallerKey, keyCap: number, signal?: AbortSignal): Promise<AcquireResult> {
    const now = this.tryAcquire(key, keyCap);
    if (now.ok || this.#closed || this.#queue.max === 0 || this.#queue.waitMs === 0) {
      return Promise.resolve(now);
    }
    if (signal?.aborted) {
      return Promise.resolve({
        ok: false,
        code: "CANCELLED",
        reason: "The client cancelled the call before it started; nothing ran.",
        queuedMs: 0,
      });
    }
    if (this.#waitingCount >= this.#queue.max && !this.#displaceFor(key)) {
      return Promise.resolve({ ok: false, code: "BUSY", reason: this.#fullReason(), queuedMs: 0 });
    }
    return new Promise((resolve) => {
      const enqueuedAt = performance.now();
      const onAbort = () => {
        const position = this.#positionOf(waiter);
        waiter.settle({
          ok: false,
          code: "CANCELLED",
          reason:
            `The client cancelled the call while it waited for a slot (number ${position} of ${this.#waitingCount} in the queue); nothing ran.`,
          queuedMs: waited(),
        });
      };
      const waited = () => Math.round(performance.now() - enqueuedAt);
      const waiter: Waiter = {
        key,
        keyCap,
        enqueuedAt,
        settle: (result) => {
          // Settled once: by a slot, the wait bound, a cancel, a displacement or close().
          if (!this.#remove(waiter)) return;
          timer.cancel();
          signal?.removeEventListener("abort", onAbort);
          this.#queue.onWaited?.(waited());
          resolve(result.ok ? { ...result, queuedMs: waited() } : result);
        },
      };
      // Declared after `waiter`, whose settle() clears it: nothing can settle
      // the waiter before it is in the queue, below.
      const timer = after(this.#queue.waitMs, () => {
        waiter.settle({
          ok: false,
          code: "BUSY",
          reason: this.#timeoutReason(waiter, waited()),
          queuedMs: waited(),
        });
      });
      signal?.addEventListener("abort", onAbort, { once: true });
      const line = this.#waiting.get(key);
      if (line === undefined) this.#waiting.set(key, [waiter]);
      else line.push(waiter);
      this.#waitingCount++;
    });
  }

  /** True once `close()` was called: the server is stopping. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Refuses every waiting call and every later one (the server is stopping);
   * running calls keep their slots until they release them.
   */
  close(): void {
    this.#closed = true;
    for (const line of [...this.#waiting.values()]) {
      for (const waiter of [...line]) {
        waiter.settle({
          ok: false,
          code: "BUSY",
          reason: STOPPING,
          queuedMs: Math.round(performance.now() - waiter.enqueuedAt),
        });
      }
    }
  }

  /** The sentence naming the cap that keeps `key` from starting now, or null. */
  #blockedBy(key: CallerKey, keyCap: number): string | null {
    if (this.#closed) return STOPPING;
    if (this.#running >= this.#globalCap) {
      return `The server is already running ${this.#running} commands, its limit (limits.max_concurrent = ${this.#globalCap}).`;
    }
    const held = key === null ? 0 : this.#perKey.get(key) ?? 0;
    if (key !== null && held >= keyCap) {
      return `This client already has ${held} commands running, its limit (http.max_concurrent_per_client = ${keyCap}).`;
    }
    return null;
  }

  /** True when some waiting call other than `key`'s own blocked ones could use a free slot. */
  #queueHolds(key: CallerKey): boolean {
    for (const [other, line] of this.#waiting) {
      const first = line[0];
      if (first !== undefined && (other === key || this.#blockedBy(other, first.keyCap) === null)) {
        return true;
      }
    }
    return false;
  }

  #take(key: CallerKey): Release {
    this.#running++;
    if (key !== null) this.#perKey.set(key, (this.#perKey.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running--;
      if (key !== null) {
        const left = (this.#perKey.get(key) ?? 1) - 1;
        // Delete at zero so the map cannot grow with every client ever seen.
        if (left <= 0) this.#perKey.delete(key);
        else this.#perKey.set(key, left);
      }
      this.#dispatch();
    };
  }

  /**
   * Hands free slots to waiting calls, round-robin: the first caller in
   * service order whose own cap allows it gets one, then moves to the back.
   * Runs synchronously inside `release`, so no newcomer can take the slot first.
   */
  #dispatch(): void {
    while (this.#running < this.#globalCap && this.#waitingCount > 0) {
      let served: Waiter | undefined;
      for (const [key, line] of this.#waiting) {
        const first = line[0];
        if (first !== undefined && this.#blockedBy(key, first.keyCap) === null) {
          served = first;
          break;
        }
      }
      if (served === undefined) return;
      const release = this.#take(served.key);
      served.settle({ ok: true, release, queuedMs: 0 });
      // Served: this caller's remaining calls go behind every other caller's.
      const line = this.#waiting.get(served.key);
      if (line !== undefined) {
        this.#waiting.delete(served.key);
        this.#waiting.set(served.key, line);
      }
    }
  }

  /** Takes `waiter` out of the queue; false when it was not in it (already settled). */
  #remove(waiter: Waiter): boolean {
    const line = this.#waiting.get(waiter.key);
    const at = line?.indexOf(waiter) ?? -1;
    if (line === undefined || at < 0) return false;
    line.splice(at, 1);
    // An empty line is dropped (the map must not grow with every caller ever seen);
    // a caller that comes back joins at the back.
    if (line.length === 0) this.#waiting.delete(waiter.key);
    this.#waitingCount--;
    return true;
  }

  /**
   * The queue is full: the caller holding the most places gives its newest
   * one to `key`, if `key` holds fewer. False when `key` is the heaviest itself.
   */
  #displaceFor(key: CallerKey): boolean {
    let heaviest: Waiter[] | undefined;
    for (const line of this.#waiting.values()) {
      if (heaviest === undefined || line.length > heaviest.length) heaviest = line;
    }
    const mine = this.#waiting.get(key)?.length ?? 0;
    const newest = heaviest?.at(-1);
    if (heaviest === undefined || newest === undefined || heaviest.length <= mine + 1) return false;
    newest.settle({
      ok: false,
      code: "BUSY",
      reason:
        `The queue is full (limits.queue_max = ${this.#queue.max}) and this client held the ` +
        "most places in it, so its newest waiting call gave its place to another client's; " +
        "try again when your other calls have started.",
      queuedMs: Math.round(performance.now() - newest.enqueuedAt),
    });
    return true;
  }

  /**
   * 1-based place of `waiter` in round-robin service order: every caller
   * ahead of it in the map is served once per round, and it waits for the
   * rounds its own earlier calls take.
   */
  #positionOf(waiter: Waiter): number {
    const own = this.#waiting.get(waiter.key) ?? [];
    const index = Math.max(0, own.indexOf(waiter));
    let ahead = 0;
    let beforeMine = true;
    for (const [key, line] of this.#waiting) {
      if (key === waiter.key) {
        beforeMine = false;
        ahead += index;
        continue;
      }
      ahead += Math.min(line.length, index) + (beforeMine && line.length > index ? 1 : 0);
    }
    return ahead + 1;
  }

  #fullReason(): string {
    return `The queue is full: ${this.#waitingCount} call(s) wait (limits.queue_max = ${this.#queue.max}) ` +
      `while the server runs ${this.#running} commands (limits.max_concurrent = ${this.#globalCap}); ` +
      "try again later.";
  }

  #timeoutReason(waiter: Waiter, waitedMs: number): string {
    const cap = this.#blockedBy(waiter.key, waiter.keyCap) ??
      `The server is running ${this.#running} commands (limits.max_concurrent = ${this.#globalCap}).`;
    return `${cap} The call waited ${waitedMs} ms for a slot, the limit (limits.queue_wait_ms = ` +
      `${this.#queue.waitMs}), and was still number ${this.#positionOf(waiter)} of ` +
      `${this.#waitingCount} in the queue; it did not run. Try again later.`;
  }
}
