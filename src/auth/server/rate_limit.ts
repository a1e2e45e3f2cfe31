/**
 * Failed-PIN throttling. Each client address gets a few attempts per window;
 * the table is size-bounded (oldest address evicted), and a global budget
 * caps guessing from many addresses (an IPv6 /64 is effectively unlimited
 * addresses), at the price that a determined attacker can lock approvals for
 * everyone until the window passes. Behind a proxy every request shares the
 * proxy's address, so the per-address limit then acts globally too.
 *
 * @module
 */
import { ExpiringMap } from "../_expiring_map.ts";

/** Tunables of {@linkcode FailureLimiter}; the defaults are the documented ones. */
export interface FailureLimits {
  /** Failures one address may make in a window before it is blocked until the window ends. */
  readonly perAddress: number;
  /** Failures from all addresses together in a window before everyone is blocked. */
  readonly global: number;
  /** Length of a window in ms; it starts at the first failure it counts. */
  readonly windowMs: number;
  /** Most addresses counted at once; beyond it the oldest address is forgotten. */
  readonly trackedAddresses: number;
}

/**
 * The documented throttle: 5 failed PINs per address and 50 in all per
 * 15 minutes, counted for up to 1024 addresses.
 */
export const DEFAULT_FAILURE_LIMITS: FailureLimits = Object.freeze({
  perAddress: 5,
  global: 50,
  windowMs: 15 * 60_000,
  trackedAddresses: 1024,
});

interface Window {
  count: number;
  readonly endsAt: number;
}

/**
 * Whether a PIN attempt may be judged now: an expected outcome, so a value
 * the caller turns into a 429 with `Retry-After`.
 */
export type LimitCheck =
  | { readonly blocked: false }
  | {
    readonly blocked: true;
    /** Whole seconds (at least 1) until the blocking window ends: the `Retry-After` value. */
    readonly retryAfterSeconds: number;
    /** Which budget is spent: this address's own, or the one all addresses share. */
    readonly scope: "address" | "global";
  };

/**
 * Counts failures per address and overall inside fixed windows. Only failures
 * count, and the PIN check asks {@linkcode FailureLimiter.check} before it
 * compares the PIN, so a guess made while blocked teaches nothing.
 *
 * @example Five wrong PINs block the address, not its neighbour
 * ```ts
 * import { DEFAULT_FAILURE_LIMITS, FailureLimiter } from "./mod.ts";
 *
 * const limiter = new FailureLimiter(DEFAULT_FAILURE_LIMITS, Date.now);
 * for (let i = 0; i < DEFAULT_FAILURE_LIMITS.perAddress; i++) limiter.recordFailure("192.0.2.7");
 * console.assert(limiter.check("192.0.2.7").blocked);
 * console.assert(!limiter.check("192.0.2.8").blocked);
 * ```
 */
export class FailureLimiter {
  readonly #limits: FailureLimits;
  readonly #now: () => number;
  readonly #byAddress: ExpiringMap<string, Window>;
  #global: Window | null = null;

  /**
   * Creates a limiter with no failures counted.
   *
   * @param limits The budgets and the window length.
   * @param now Clock in milliseconds (tests move it).
   */
  constructor(limits: FailureLimits, now: () => number) {
    this.#limits = limits;
    this.#now = now;
    this.#byAddress = new ExpiringMap(limits.trackedAddresses, "evict-oldest", now);
  }

  /**
   * Whether `address` may try now; counts nothing.
   *
   * @param address The client address (`RequestInfo.remoteAddr`).
   * @returns Not blocked, or which budget blocks and for how many seconds.
   */
  check(address: string): LimitCheck {
    const now = this.#now();
    const own = this.#byAddress.get(address);
    if (own !== undefined && own.count >= this.#limits.perAddress) {
      return { blocked: true, retryAfterSeconds: secondsUntil(own.endsAt, now), scope: "address" };
    }
    const global = this.#liveGlobal(now);
    if (global !== null && global.count >= this.#limits.global) {
      return {
        blocked: true,
        retryAfterSeconds: secondsUntil(global.endsAt, now),
        scope: "global",
      };
    }
    return { blocked: false };
  }

  /** Records a failure; returns the address's failure count in this window. */
  recordFailure(address: string): number {
    const now = this.#now();
    const endsAt = now + this.#limits.windowMs;
    const own = this.#byAddress.get(address) ?? { count: 0, endsAt };
    own.count++;
    this.#byAddress.set(address, own, own.endsAt);
    const global = this.#liveGlobal(now) ?? { count: 0, endsAt };
    global.count++;
    this.#global = global;
    return own.count;
  }

  /** A correct PIN clears the address's own count (not the global one). */
  reset(address: string): void {
    this.#byAddress.delete(address);
  }

  #liveGlobal(now: number): Window | null {
    if (this.#global !== null && this.#global.endsAt <= now) this.#global = null;
    return this.#global;
  }
}

function secondsUntil(endsAt: number, now: number): number {
  return Math.max(1, Math.ceil((endsAt - now) / 1000));
}
