/**
 * The JSON-RPC requests a transport has received and not yet answered.
 *
 * Two uses. A second request with the id of one still in flight is refused
 * before anything runs: the SDK keys its bookkeeping by id, so the second
 * would take the first one's place and leave it unanswered though its command
 * ran. And a transport that is about to close (shutdown, session DELETE) waits,
 * within a grace period, until every received request has had its answer
 * written, so a cancelled call's `CANCELLED` result reaches its client.
 *
 * @module
 */
import { after } from "../timers/mod.ts";
import { requestKey } from "../server/calls.ts";

/** Requests received and not yet answered. */
export class PendingRequests {
  readonly #pending = new Set<string>();
  #waiters: Array<() => void> = [];

  /** Number of unanswered requests. */
  get size(): number {
    return this.#pending.size;
  }

  /** Records a request; false when one with this id is already unanswered. */
  add(id: string | number): boolean {
    const key = requestKey(id);
    if (this.#pending.has(key)) return false;
    this.#pending.add(key);
    return true;
  }

  /** True when a request with this id is unanswered. */
  has(id: string | number): boolean {
    return this.#pending.has(requestKey(id));
  }

  /** Records that the answer to `id` was written (or could not be). */
  settle(id: string | number): void {
    if (!this.#pending.delete(requestKey(id))) return;
    if (this.#pending.size > 0) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }

  /**
   * Waits until every request is answered, or `timeoutMs` passed.
   *
   * @returns True when all were answered in time.
   */
  async drained(timeoutMs: number): Promise<boolean> {
    if (this.#pending.size === 0) return true;
    const { promise, resolve } = Promise.withResolvers<boolean>();
    const timer = after(timeoutMs, () => resolve(false));
    this.#waiters.push(() => resolve(true));
    try {
      return await promise;
    } finally {
      timer.cancel();
    }
  }
}

/** The id of a JSON-RPC request (a message with a method and an id), else null. */
export function requestIdOf(message: unknown): string | number | null {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return null;
  const record = message as Record<string, unknown>;
  if (typeof record.method !== "string") return null;
  const id = record.id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

/** The id of a JSON-RPC response (result or error), else null. */
export function responseIdOf(message: unknown): string | number | null {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return null;
  const record = message as Record<string, unknown>;
  if (!("result" in record) && !("error" in record)) return null;
  const id = record.id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}
