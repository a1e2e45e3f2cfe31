/**
 * A `Map` with a capacity and a per-entry deadline. Every table the
 * authorization server keeps for strangers (pending clients, approval
 * transactions, codes, failed-PIN counters) is one of these, so no request
 * pattern can grow memory without bound.
 *
 * @module
 */

/** What to do when a new key arrives and the map is full of live entries. */
export type WhenFull = "refuse" | "evict-oldest";

/**
 * A size-bounded map whose entries vanish after their deadline.
 *
 * @example A full table refuses a stranger's new entry
 * ```ts
 * import { ExpiringMap } from "./server/mod.ts";
 *
 * const pending = new ExpiringMap<string, string>(1, "refuse", Date.now);
 * console.assert(pending.set("a", "first", Date.now() + 60_000));
 * console.assert(!pending.set("b", "second", Date.now() + 60_000));
 * console.assert(pending.take("a") === "first" && pending.get("a") === undefined);
 * ```
 */
export class ExpiringMap<K, V> {
  readonly #entries = new Map<K, { value: V; expiresAt: number }>();
  readonly #capacity: number;
  readonly #whenFull: WhenFull;
  readonly #now: () => number;

  /**
   * Creates an empty map.
   *
   * @param capacity Most live entries held at once.
   * @param whenFull `refuse`: `set` returns false; `evict-oldest`: the oldest insertion goes.
   * @param now Clock in milliseconds.
   * @throws {RangeError} If `capacity` is not a positive integer.
   */
  constructor(capacity: number, whenFull: WhenFull, now: () => number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError("capacity must be >= 1");
    this.#capacity = capacity;
    this.#whenFull = whenFull;
    this.#now = now;
  }

  /** The live value for `key`, or undefined (an expired entry is dropped on sight). */
  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.#now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /**
   * Stores `value` until `expiresAt` (ms). Replacing an existing key always succeeds.
   *
   * @returns false when the map is full and `whenFull` is `refuse`.
   */
  set(key: K, value: V, expiresAt: number): boolean {
    if (!this.#entries.has(key) && this.#entries.size >= this.#capacity) {
      this.prune();
      if (this.#entries.size >= this.#capacity) {
        if (this.#whenFull === "refuse") return false;
        const oldest = this.#entries.keys().next();
        if (!oldest.done) this.#entries.delete(oldest.value);
      }
    }
    this.#entries.delete(key); // re-insert at the end: insertion order is age order
    this.#entries.set(key, { value, expiresAt });
    return true;
  }

  /** Removes `key` and returns its live value (one-time use). */
  take(key: K): V | undefined {
    const value = this.get(key);
    this.#entries.delete(key);
    return value;
  }

  /** Removes `key`, live or expired; nothing happens when it is absent. */
  delete(key: K): void {
    this.#entries.delete(key);
  }

  /** Live entries (expired ones are dropped first). */
  get size(): number {
    this.prune();
    return this.#entries.size;
  }

  /** Drops every expired entry. */
  prune(): void {
    const now = this.#now();
    for (const [key, entry] of this.#entries) {
      if (entry.expiresAt <= now) this.#entries.delete(key);
    }
  }
}
