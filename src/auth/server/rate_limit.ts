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

/** Tunables; the defaults are the documented ones. */
export interface FailureLimits {
  readonly perAddress: number;
  readonly global: number;
  readonly windowMs: number;
  readonly trackedAddresses: number;
}

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

export type LimitCheck =
  | { readonly blocked: false }
  | {
    readonly blocked: true;
    readonly retryAfterSeconds: number;
    readonly scope: "address" | "global";
  };

/** Counts failures per address and overall inside fixed windows. */
export class FailureLimiter {
  readonly #limits: FailureLimits;
  readonly #now: () => number;
  readonly #byAddress: ExpiringMap<string, Window>;
  #global: Window | null = null;

  constructor(limits: FailureLimits, now: () => number) {
    this.#limits = limits;
    this.#now = now;
    this.#byAddress = new ExpiringMap(limits.trackedAddresses, "evict-oldest", now);
  }

  /** Whether `address` may try now. */
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
