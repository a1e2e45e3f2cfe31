/**
 * An approval transaction: the validated authorize parameters, kept on the
 * server under a random one-time id. The approval form carries only that id,
 * so nothing the browser re-posts (redirect URI, challenge, scopes) is ever
 * trusted, and a forged form cannot name parameters of its own.
 *
 * Each rendering of the page also carries a form token (`csrf`), random and
 * kept only here and in that page. A post must return it (compared in
 * constant time); it is replaced after every post that does not end the
 * transaction, so each token is accepted at most once. The token is what
 * judges a post whose `Origin` is `null` (browsers send that under some
 * referrer policies and privacy settings): the header alone never decides.
 *
 * @module
 */
import type { Scope } from "../scopes.ts";
import type { RegisteredClient } from "./registration.ts";

/** The server-side record behind one approval page. */
export interface AuthorizeTransaction {
  /** The random one-time id the approval form carries (`txn`). */
  readonly id: string;
  /** The client asking, as registered (approved or still pending). */
  readonly client: RegisteredClient;
  /** The redirect URI of the request, already matched exactly against the registration. */
  readonly redirectUri: string;
  /** The PKCE `code_challenge` the code will be bound to. */
  readonly codeChallenge: string;
  /** The PKCE method; `plain` only when `[auth] allow_plain_pkce` permits it. */
  readonly codeChallengeMethod: "S256" | "plain";
  /** The client's `state`, returned unchanged on the redirect. */
  readonly state: string;
  /** The RFC 8707 resource asked for: always this server's own `/mcp` resource. */
  readonly resource: string;
  /** The scopes the operator is asked to grant. */
  readonly scopes: ReadonlySet<Scope>;
  /** The form token of the page rendered last for this transaction. */
  readonly csrf: string;
  /** When the transaction expires (ms); a new token keeps this expiry. */
  readonly expiresAt: number;
}

/** How long an approval page stays usable. */
export const TRANSACTION_TTL_MS = 10 * 60_000;

/** Most approval pages open at once. */
export const MAX_TRANSACTIONS = 256;
