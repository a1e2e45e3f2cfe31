/**
 * Authorization codes: 256 random bits, valid for 60 seconds, redeemable
 * once. A redeemed code is remembered a while longer with the id of the token
 * it produced, so a second redemption (a sign the code leaked) can revoke
 * that token (OAuth 2.1 §4.1.3: "the authorization server SHOULD revoke all
 * tokens previously issued based on that authorization code").
 *
 * @module
 */
import { ExpiringMap } from "../_expiring_map.ts";
import { randomToken } from "../_http.ts";
import type { Scope } from "../scopes.ts";

/** Lifetime of a code: 60 s, long enough for a redirect, short enough to make a stolen one useless. */
export const CODE_TTL_MS = 60_000;
/** How long a code is remembered for replay detection. */
export const CODE_MEMORY_MS = 15 * 60_000;
/** Most codes remembered at once. */
export const MAX_CODES = 1024;

/** What a code stands for. */
export interface CodeGrant {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly codeChallenge: string;
  readonly codeChallengeMethod: "S256" | "plain";
  readonly resource: string;
  readonly scopes: ReadonlySet<Scope>;
  /** Milliseconds; the code cannot be redeemed after this. */
  readonly expiresAt: number;
  /** Set at the first redemption attempt; a token it produced is listed here. */
  redeemed: { tokens: { jti: string; exp: number }[] } | null;
}

/** The in-memory code table. */
export class CodeStore {
  readonly #codes: ExpiringMap<string, CodeGrant>;
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
    this.#codes = new ExpiringMap(MAX_CODES, "refuse", now);
  }

  /** Issues a code, or null when the table is full. */
  issue(grant: Omit<CodeGrant, "expiresAt" | "redeemed">): string | null {
    const code = randomToken(32);
    const now = this.#now();
    const record: CodeGrant = { ...grant, expiresAt: now + CODE_TTL_MS, redeemed: null };
    return this.#codes.set(code, record, now + CODE_MEMORY_MS) ? code : null;
  }

  /** Forgets a code so it can never be redeemed. */
  discard(code: string): void {
    this.#codes.delete(code);
  }

  /** The grant behind `code` (redeemed or not), or undefined. */
  lookup(code: string): CodeGrant | undefined {
    return this.#codes.get(code);
  }
}
