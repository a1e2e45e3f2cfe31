/**
 * Issues access tokens: HS256 JWTs in the RFC 9068 profile (`typ: at+jwt`)
 * whose audience is exactly this server's `/mcp` resource (RFC 8707), so a
 * token can never be replayed at another resource and no other resource's
 * token is accepted here.
 *
 * @module
 */
import { SignJWT } from "jose";
import { randomToken } from "../_http.ts";
import { formatScopes, type Scope } from "../scopes.ts";

/** The JOSE header type of our access tokens (RFC 9068 §2.1). */
export const ACCESS_TOKEN_TYPE = "at+jwt";

/** An issued token and the facts needed to revoke it. */
export interface IssuedToken {
  /** The compact JWS, as sent in `access_token`. */
  readonly token: string;
  /** The token's id: what a revocation (after a code replay) names. */
  readonly jti: string;
  /** Issued at, in seconds since the epoch. */
  readonly iat: number;
  /** Expires at, in seconds since the epoch. */
  readonly exp: number;
}

/**
 * Signs a token for `clientId` with `scopes`.
 *
 * @param options The signing key and the claims.
 * @returns The token and the facts needed to revoke it.
 *
 * @example
 * ```ts
 * import { signAccessToken } from "./mod.ts";
 *
 * const issued = await signAccessToken({
 *   key: crypto.getRandomValues(new Uint8Array(32)),
 *   issuer: "http://127.0.0.1:8080",
 *   resource: "http://127.0.0.1:8080/mcp",
 *   clientId: "htmcp-example",
 *   scopes: new Set(["shell:read"]),
 *   ttlSeconds: 3600,
 *   nowMs: Date.now(),
 * });
 * console.assert(issued.exp - issued.iat === 3600);
 * ```
 */
export async function signAccessToken(options: {
  /** The HS256 key (at least 256 bits). */
  key: Uint8Array;
  /** `iss`: this server's issuer identifier. */
  issuer: string;
  /** `aud`: the one resource the token is valid at (`${issuer}/mcp`). */
  resource: string;
  /** `sub` and `client_id`: the client the token is issued to. */
  clientId: string;
  /** `scope`: the granted scopes. */
  scopes: ReadonlySet<Scope>;
  /** Lifetime in seconds (`HTMCP_OAUTH_ACCESS_TOKEN_TTL_S`, default 3600). */
  ttlSeconds: number;
  /** The issuing time in milliseconds. */
  nowMs: number;
  /** The token id; a fresh 128-bit random one by default. */
  jti?: string;
}): Promise<IssuedToken> {
  const iat = Math.floor(options.nowMs / 1000);
  const exp = iat + options.ttlSeconds;
  const jti = options.jti ?? randomToken(16);
  const token = await new SignJWT({
    scope: formatScopes(options.scopes),
    client_id: options.clientId,
  })
    .setProtectedHeader({ alg: "HS256", typ: ACCESS_TOKEN_TYPE })
    .setIssuer(options.issuer)
    .setAudience(options.resource)
    .setSubject(options.clientId)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .setJti(jti)
    .sign(options.key);
  return { token, jti, iat, exp };
}
