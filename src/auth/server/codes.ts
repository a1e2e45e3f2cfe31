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

/**
 * What a code stands for: the approved request, which the token request must
 * repeat (client, redirect URI, resource) and prove (the PKCE verifier).
 */
export interface CodeGrant {
  /** The client the code was issued to; only it may redeem the code. */
  readonly clientId: string;
  /** The redirect URI of the authorize request; the token request must name the same one. */
  readonly redirectUri: string;
  /** The PKCE challenge the token request's `code_verifier` must match. */
  readonly codeChallenge: string;
  /** How `codeChallenge` was derived from the verifier. */
  readonly codeChallengeMethod: "S256" | "plain";
  /** The resource the token will be for (its audience). */
  readonly resource: string;
  /** The scopes the operator approved. */
  readonly scopes: ReadonlySet<Scope>;
  /** Milliseconds; the code cannot be redeemed after this. */
  readonly expiresAt: number;
  /** Set at the first redemption attempt; a token it produced is listed here. */
  /**
   * Set at the first redemption: the tokens it issued, and whether a replay
   * has been seen (a redemption still in flight then issues nothing).
   */
  redeemed: { tokens: { jti: string; exp: number }[]; replayed: boolean } | null;
}

/**
 * The in-memory code table: at most {@linkcode MAX_CODES} codes, each
 * remembered for {@linkcode CODE_MEMORY_MS}; when full, new codes are
 * refused rather than old ones forgotten early (which would lose replay
 * detection).
 *
 * @example A code stands for its grant until it is discarded
 * ```ts
 * import { CodeStore } from "./mod.ts";
 *
 * const codes = new CodeStore(Date.now);
 * const code = codes.issue({
 *   clientId: "htmcp-example",
 *   redirectUri: "http://127.0.0.1:8765/callback",
 *   codeChallenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
 *   codeChallengeMethod: "S256",
 *   resource: "http://127.0.0.1:8080/mcp",
 *   scopes: new Set(["shell:read"]),
 * });
 * if (code === null) throw new Error("the code table is full");
 * console.assert(codes.lookup(code)?.redeemed === null);
 * codes.discard(code);
 * console.assert(codes.lookup(code) === undefined);
 * ```
 */
export class CodeStore {
  readonly #codes: ExpiringMap<string, CodeGrant>;
  readonly #now: () => number;

  /**
   * Creates an empty table.
   *
   * @param now Clock in milliseconds (tests move it).
   */
  constructor(now: () => number) {
    this.#now = now;
    this.#codes = new ExpiringMap(MAX_CODES, "refuse", now);
  }

  /**
   * Issues a code: 256 random bits (base64url), valid for {@linkcode CODE_TTL_MS}.
   *
   * @param grant What the code stands for, as approved.
   * @returns The code, or null when the table is full.
   */
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
