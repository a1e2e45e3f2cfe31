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
  readonly token: string;
  readonly jti: string;
  /** Seconds since the epoch. */
  readonly iat: number;
  readonly exp: number;
}

/** Signs a token for `clientId` with `scopes`. */
export async function signAccessToken(options: {
  key: Uint8Array;
  issuer: string;
  resource: string;
  clientId: string;
  scopes: ReadonlySet<Scope>;
  ttlSeconds: number;
  nowMs: number;
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
