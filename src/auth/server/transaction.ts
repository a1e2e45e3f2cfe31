/**
 * An approval transaction: the validated authorize parameters, kept on the
 * server under a random one-time id. The approval form carries only that id,
 * so nothing the browser re-posts (redirect URI, challenge, scopes) is ever
 * trusted, and a forged form cannot name parameters of its own.
 *
 * @module
 */
import type { Scope } from "../scopes.ts";
import type { RegisteredClient } from "./registration.ts";

/** The server-side record behind one approval page. */
export interface AuthorizeTransaction {
  readonly id: string;
  readonly client: RegisteredClient;
  readonly redirectUri: string;
  readonly codeChallenge: string;
  readonly codeChallengeMethod: "S256" | "plain";
  readonly state: string;
  readonly resource: string;
  readonly scopes: ReadonlySet<Scope>;
}

/** How long an approval page stays usable. */
export const TRANSACTION_TTL_MS = 10 * 60_000;

/** Most approval pages open at once. */
export const MAX_TRANSACTIONS = 256;
