/**
 * The resource server's refusals (RFC 6750 §3, RFC 9728 §5.1, MCP spec):
 * every 401/403 names the protected-resource metadata URL, so a client that
 * has never seen this server can discover how to get a token, and the scope
 * it needs.
 *
 * @module
 */
import { jsonResponse } from "../_http.ts";
import { DEFAULT_SCOPES, formatScopes, type Scope } from "../scopes.ts";
import type { BearerFailureReason } from "./verify.ts";

/** Words for each reason: enough for a client to know what to do, nothing secret. */
const DESCRIPTIONS: ReadonlyMap<BearerFailureReason, string> = new Map([
  ["missing_token", "An access token is required."],
  ["token_in_query", "Send the access token in the Authorization header, never in the URL."],
  ["malformed_header", 'The Authorization header must be "Bearer" followed by a token.'],
  ["malformed_token", "The access token is malformed."],
  ["wrong_algorithm", "The access token is invalid."],
  ["wrong_type", "The access token is invalid."],
  ["bad_signature", "The access token is invalid."],
  ["expired", "The access token has expired."],
  ["wrong_issuer", "The access token was issued by another authorization server."],
  ["wrong_audience", "The access token was issued for another resource."],
  ["issued_in_future", "The access token is invalid."],
  ["bad_claims", "The access token is invalid."],
  ["client_unknown", "The client of this access token is not approved."],
  ["client_revoked", "The client of this access token was revoked."],
  ["token_revoked", "The access token was revoked."],
  ["revocation_list_unavailable", "The server cannot check tokens right now."],
  ["provider_unavailable", "The server cannot check tokens right now."],
  ["token_inactive", "The access token is not active."],
  ["no_profile", "No access profile of this server matches your identity."],
]);

/** The description sent for a reason. */
export function describeFailure(reason: BearerFailureReason): string {
  return DESCRIPTIONS.get(reason) ?? "The access token is invalid.";
}

/**
 * The refusal for a failed bearer check.
 *
 * - no token: 401 with the challenge only (RFC 6750 §3.1: no error code);
 * - token in the query string: 400 `invalid_request`;
 * - revocation list or identity provider unreachable: 503, the client should retry;
 * - a valid token whose principal matches no profile: 403 `access_denied`
 *   (a new token would not help, so no `invalid_token` that invites a retry);
 * - anything else: 401 `invalid_token`.
 *
 * @param scopes what the challenge names (default: `DEFAULT_SCOPES`)
 */
export function bearerRefusal(
  reason: BearerFailureReason,
  metadataUrl: string,
  scopes: readonly Scope[] = DEFAULT_SCOPES,
): Response {
  // A client asks for what the challenge names (see `challengeScopes`).
  const base = `Bearer resource_metadata="${metadataUrl}", scope="${scopes.join(" ")}"`;
  const description = describeFailure(reason);
  if (reason === "missing_token") {
    return jsonResponse(401, { error: "invalid_token", error_description: description }, {
      "www-authenticate": base,
    });
  }
  if (reason === "no_profile") {
    return jsonResponse(403, { error: "access_denied", error_description: description });
  }
  if (reason === "revocation_list_unavailable" || reason === "provider_unavailable") {
    return jsonResponse(503, { error: "temporarily_unavailable", error_description: description }, {
      "retry-after": "5",
    });
  }
  const error = reason === "token_in_query" ? "invalid_request" : "invalid_token";
  const status = reason === "token_in_query" ? 400 : 401;
  return jsonResponse(status, { error, error_description: description }, {
    "www-authenticate": `${base}, error="${error}", error_description="${description}"`,
  });
}

/** RFC 6750 §3.1 `insufficient_scope`: 403 naming the scope the call needs. */
export function insufficientScopeResponse(scope: Scope, metadataUrl: string): Response {
  const description = `This call needs the scope ${scope}.`;
  return jsonResponse(403, { error: "insufficient_scope", error_description: description }, {
    "www-authenticate": `Bearer error="insufficient_scope", scope="${
      formatScopes(new Set([scope]))
    }", resource_metadata="${metadataUrl}", error_description="${description}"`,
  });
}
