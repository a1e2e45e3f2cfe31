/**
 * `POST /token`: the authorization code grant for public clients (OAuth 2.1
 * §4.1.3) with PKCE. A code is consumed by its first redemption attempt,
 * whatever the outcome; a second attempt is treated as a leak: `invalid_grant`,
 * and the token the first one produced is revoked. Responses are never cached.
 * Refresh tokens are not issued (documented in docs/oauth.md).
 *
 * @module
 */
import {
  CORS,
  jsonResponse,
  mediaType,
  NO_STORE,
  oauthError,
  parseForm,
  randomToken,
  readBodyLimited,
} from "../_http.ts";
import { writeAudit } from "../audit_sink.ts";
import { formatScopes, scopeList } from "../scopes.ts";
import { signAccessToken } from "./access_token.ts";
import { findClient, type RequestInfo, type ServerDeps } from "./deps.ts";
import { verifyPkce } from "./pkce.ts";
import type { CodeGrant } from "./codes.ts";

/** Handles a token request. */
export async function handleToken(
  deps: ServerDeps,
  request: Request,
  _info: RequestInfo,
): Promise<Response> {
  const body = await readBodyLimited(request, deps.settings.maxBodyBytes);
  if (!body.ok) {
    return jsonResponse(413, {
      error: "request_too_large",
      error_description: `The token request exceeds ${deps.settings.maxBodyBytes} bytes.`,
    }, { ...NO_STORE, ...CORS });
  }
  const fail = (status: number, error: string, description: string) =>
    oauthError(status, error, description, CORS);
  if (mediaType(request) !== "application/x-www-form-urlencoded") {
    return fail(
      400,
      "invalid_request",
      "The token request must be application/x-www-form-urlencoded.",
    );
  }
  // Public clients only: no client ever received a secret, so any attempt at
  // client authentication is a confused or hostile client.
  if (request.headers.has("authorization")) {
    return fail(
      401,
      "invalid_client",
      "Client authentication is not supported; this server has public clients only.",
    );
  }
  const form = parseForm(new TextDecoder().decode(body.bytes));
  if (!form.ok) {
    return fail(
      400,
      "invalid_request",
      `The parameter "${form.duplicate}" is given more than once.`,
    );
  }
  const p = form.params;
  if (p.has("client_secret") || p.has("client_assertion")) {
    return fail(
      401,
      "invalid_client",
      "Client authentication is not supported; this server has public clients only.",
    );
  }
  const grantType = p.get("grant_type");
  if (grantType === undefined) return fail(400, "invalid_request", "grant_type is missing.");
  if (grantType !== "authorization_code") {
    return fail(400, "unsupported_grant_type", "Only the authorization_code grant is supported.");
  }
  const code = p.get("code");
  const clientId = p.get("client_id");
  if (code === undefined || code === "") return fail(400, "invalid_request", "code is missing.");
  if (clientId === undefined || clientId === "") {
    return fail(400, "invalid_request", "client_id is missing.");
  }

  const grant = deps.codes.lookup(code);
  if (grant === undefined) {
    return fail(400, "invalid_grant", "The authorization code is invalid or expired.");
  }
  // Replay is checked before expiry: a leaked code replayed after its 60
  // seconds still revokes what it issued (codes are remembered 15 minutes).
  if (grant.redeemed !== null) {
    const revoked = grant.redeemed.tokens;
    grant.redeemed.tokens = [];
    // The first redemption may still be awaiting its checks: it must then
    // issue nothing, since the list revoked here does not hold its token yet.
    grant.redeemed.replayed = true;
    // The revocation holds in this process whatever happens; the append that
    // tells the other servers sharing state_dir may fail, and then the
    // operator must learn of it from the log, not find out from a live token.
    let stored: { revocation_stored: true } | {
      revocation_stored: false;
      revocation_error: string;
    } = { revocation_stored: true };
    try {
      await deps.registry.revokeTokens(revoked, Math.floor(deps.now() / 1000));
    } catch (error) {
      stored = {
        revocation_stored: false,
        revocation_error: error instanceof Error ? error.message : String(error),
      };
    }
    await deps.audit.writeEvent("code_reused", {
      client_id: grant.clientId,
      revoked_jtis: revoked.map((t) => t.jti),
      ...stored,
    });
    return fail(
      400,
      "invalid_grant",
      "The authorization code was already used; the tokens it issued are revoked.",
    );
  }
  // Consumed now, before any await: one attempt per code.
  const redeemed: NonNullable<CodeGrant["redeemed"]> = { tokens: [], replayed: false };
  grant.redeemed = redeemed;
  if (grant.expiresAt <= deps.now()) {
    return fail(400, "invalid_grant", "The authorization code is invalid or expired.");
  }

  if (clientId !== grant.clientId) {
    return fail(400, "invalid_grant", "The authorization code was issued to another client.");
  }
  if (p.get("redirect_uri") !== grant.redirectUri) {
    return fail(400, "invalid_grant", "redirect_uri does not match the authorization request.");
  }
  const resource = p.get("resource");
  if (resource !== grant.resource) {
    return fail(
      400,
      "invalid_target",
      `The resource must be "${grant.resource}", as in the authorization request.`,
    );
  }
  if (!verifyPkce(p.get("code_verifier") ?? "", grant.codeChallenge, grant.codeChallengeMethod)) {
    return fail(
      400,
      "invalid_grant",
      "The code_verifier does not match the code_challenge (PKCE).",
    );
  }
  if ((await findClient(deps, clientId)) === null) {
    return fail(400, "invalid_grant", "The client was revoked.");
  }

  // A replay that arrived during the awaits above revoked an empty list:
  // this redemption is the one it revokes, so it issues nothing.
  if (redeemed.replayed) {
    return fail(
      400,
      "invalid_grant",
      "The authorization code was already used; the tokens it issued are revoked.",
    );
  }
  const nowMs = deps.now();
  const jti = randomToken(16);
  const ttl = deps.settings.accessTokenTtlSeconds;
  // Listed before signing, so a replay racing what follows revokes it too.
  redeemed.tokens.push({ jti, exp: Math.floor(nowMs / 1000) + ttl });
  const issued = await signAccessToken({
    key: deps.key,
    issuer: deps.settings.issuer,
    resource: grant.resource,
    clientId,
    scopes: grant.scopes,
    ttlSeconds: ttl,
    nowMs,
    jti,
  });
  const audited = await writeAudit(deps.audit, deps.settings.auditFailClosed, "token_issued", {
    client_id: clientId,
    jti,
    scopes: scopeList(grant.scopes),
    expires_at: new Date(issued.exp * 1000).toISOString(),
  });
  if (!audited) {
    return fail(500, "server_error", "The audit log cannot be written, so no token was issued.");
  }
  return jsonResponse(200, {
    access_token: issued.token,
    token_type: "Bearer",
    expires_in: ttl,
    scope: formatScopes(grant.scopes),
  }, { ...NO_STORE, ...CORS });
}
