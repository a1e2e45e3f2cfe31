/**
 * Verifies an access token. Denies on any doubt: the signature with our key
 * and only HS256 (no `none`, no algorithm confusion), the RFC 9068 type, the
 * issuer, the audience (exactly our `/mcp` resource, RFC 8707), expiry, an
 * `iat` not in the future beyond a small skew, well-formed claims, and the
 * revocation list (client and token) read fresh from `state_dir`.
 *
 * @module
 */
import { errors, jwtVerify } from "jose";
import { parseScopeString, type Scope } from "../scopes.ts";
import type { ClientRegistry } from "../state/mod.ts";

/** Tolerated clock difference for `iat`, in seconds. */
export const IAT_SKEW_SECONDS = 60;

/** Why a token was refused. Stable strings: they go to the audit log. */
export type BearerFailureReason =
  | "missing_token"
  | "token_in_query"
  | "malformed_header"
  | "malformed_token"
  | "wrong_algorithm"
  | "wrong_type"
  | "bad_signature"
  | "expired"
  | "wrong_issuer"
  | "wrong_audience"
  | "issued_in_future"
  | "bad_claims"
  | "client_unknown"
  | "client_revoked"
  | "token_revoked"
  | "revocation_list_unavailable"
  /** External mode: the provider's keys or introspection endpoint could not be reached. */
  | "provider_unavailable"
  /** External mode: introspection says the token is not active. */
  | "token_inactive"
  /** External mode: the principal's claim matches no `[auth.profiles]` entry. */
  | "no_profile";

/** The facts of a valid token. */
export interface VerifiedToken {
  /** The client the token was issued to (still approved, not revoked). */
  readonly clientId: string;
  /** What the token lets its holder call; each tool checks its own scope. */
  readonly scopes: ReadonlySet<Scope>;
  /** The token's id, by which it alone can be revoked. */
  readonly jti: string;
  /** Seconds since the epoch. */
  readonly expiresAt: number;
}

/** A valid token's facts, or why it was refused (and whose it was, when that is known). */
export type VerifyResult =
  | { readonly ok: true; readonly token: VerifiedToken }
  | {
    readonly ok: false;
    readonly reason: BearerFailureReason;
    /** The token's client, only when its signature was genuine (for the audit log). */
    readonly clientId: string | null;
  };

/** What verification needs. */
export interface VerifierContext {
  /** The HS256 secret the authorization server signs with. */
  readonly key: Uint8Array;
  /** The `iss` a token must carry: this server's own issuer URL. */
  readonly issuer: string;
  /** The `aud` a token must carry: this server's `/mcp` resource URL (RFC 8707). */
  readonly resource: string;
  /** Where client approvals and revocations are read, fresh on each verification. */
  readonly registry: ClientRegistry;
  /** Clock in milliseconds. */
  readonly now: () => number;
}

/** Verifies `token` (the text after `Bearer `). */
export async function verifyAccessToken(
  token: string,
  ctx: VerifierContext,
): Promise<VerifyResult> {
  let payload: Record<string, unknown>;
  try {
    const result = await jwtVerify(token, ctx.key, {
      algorithms: ["HS256"],
      typ: "at+jwt",
      issuer: ctx.issuer,
      audience: ctx.resource,
      currentDate: new Date(ctx.now()),
      requiredClaims: ["iss", "aud", "sub", "exp", "iat", "jti"],
    });
    payload = result.payload as Record<string, unknown>;
  } catch (error) {
    return { ok: false, reason: joseFailure(error), clientId: null };
  }
  const nowSeconds = Math.floor(ctx.now() / 1000);
  const { sub, jti, iat, exp, scope, client_id: clientId } = payload;
  if (
    typeof sub !== "string" || typeof jti !== "string" || typeof scope !== "string" ||
    clientId !== sub || typeof iat !== "number" || typeof exp !== "number" ||
    // A token carries one audience: ours. An array could smuggle in others.
    typeof payload.aud !== "string"
  ) {
    return { ok: false, reason: "bad_claims", clientId: null };
  }
  const refused = (reason: BearerFailureReason): VerifyResult => ({
    ok: false,
    reason,
    clientId: sub,
  });
  if (iat > nowSeconds + IAT_SKEW_SECONDS) return refused("issued_in_future");
  const scopes = parseScopeString(scope);
  if (!scopes.ok) return refused("bad_claims");

  let revoked: Awaited<ReturnType<ClientRegistry["revocations"]>>;
  try {
    revoked = await ctx.registry.revocations();
  } catch {
    return refused("revocation_list_unavailable");
  }
  if (revoked.badLines > 0) return refused("revocation_list_unavailable");
  if (revoked.clients.has(sub)) return refused("client_revoked");
  if (revoked.tokens.has(jti) || ctx.registry.isTokenRevokedLocally(jti)) {
    return refused("token_revoked");
  }
  let approved: Awaited<ReturnType<ClientRegistry["findApproved"]>>;
  try {
    approved = await ctx.registry.findApproved(sub);
  } catch {
    return refused("revocation_list_unavailable");
  }
  if (approved === null) return refused("client_unknown");
  return { ok: true, token: { clientId: sub, scopes: scopes.scopes, jti, expiresAt: exp } };
}

/** The reason for a jose verification error (shared with the external verifier). */
export function joseFailure(error: unknown): BearerFailureReason {
  if (error instanceof errors.JOSEAlgNotAllowed) return "wrong_algorithm";
  if (error instanceof errors.JWSSignatureVerificationFailed) return "bad_signature";
  if (error instanceof errors.JWTExpired) return "expired";
  if (error instanceof errors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case "iss":
        return "wrong_issuer";
      case "aud":
        return "wrong_audience";
      case "typ":
        return "wrong_type";
      default:
        return "bad_claims";
    }
  }
  return "malformed_token";
}
