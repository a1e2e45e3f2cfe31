/**
 * The revocation list, `state_dir/oauth-revocations.jsonl`: revoked clients
 * (by the operator's `htmcp auth revoke`) and revoked token ids (when an
 * authorization code is replayed, RFC 6749 §4.1.2 / OAuth 2.1 §4.1.3). The
 * bearer check consults it on every request.
 *
 * @module
 */

/** File name inside the state directory. */
export const REVOCATIONS_FILE = "oauth-revocations.jsonl";

/** The parsed list. */
export interface RevocationView {
  /** client id -> revocation time (seconds). */
  readonly clients: ReadonlyMap<string, number>;
  /** token id (`jti`) -> the token's expiry (seconds): after that the entry is moot. */
  readonly tokens: ReadonlyMap<string, number>;
  /**
   * Complete lines we could not understand. The bearer check refuses every
   * token while this is non-zero: a damaged list must not silently un-revoke.
   */
  readonly badLines: number;
}

/** The line revoking a client. */
export function clientRevocationLine(
  clientId: string,
  revokedAt: number,
): { readonly kind: "client" } & Record<string, unknown> {
  return { kind: "client", client_id: clientId, revoked_at: revokedAt };
}

/** The line revoking one access token. */
export function tokenRevocationLine(
  jti: string,
  exp: number,
  revokedAt: number,
): { readonly kind: "token" } & Record<string, unknown> {
  return { kind: "token", jti, exp, revoked_at: revokedAt };
}

/** Folds the file's lines into a view. */
export function buildRevocationView(records: readonly unknown[], badJson: number): RevocationView {
  const clients = new Map<string, number>();
  const tokens = new Map<string, number>();
  let badLines = badJson;
  for (const record of records) {
    if (typeof record !== "object" || record === null || Array.isArray(record)) {
      badLines++;
      continue;
    }
    const r = record as Record<string, unknown>;
    if (
      r.kind === "client" && typeof r.client_id === "string" && typeof r.revoked_at === "number"
    ) {
      if (!clients.has(r.client_id)) clients.set(r.client_id, r.revoked_at);
    } else if (r.kind === "token" && typeof r.jti === "string" && typeof r.exp === "number") {
      tokens.set(r.jti, r.exp);
    } else {
      badLines++;
    }
  }
  return { clients, tokens, badLines };
}
