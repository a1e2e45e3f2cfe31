/**
 * Turns the policy, the externally visible base URL and the admin PIN into the
 * settings every part of the authorization server reads. Startup fails closed:
 * a base URL we could not defend (plain http on a public host, a path, user
 * info) or a guessable PIN stops the server with one sentence.
 *
 * @module
 */
import { isLoopbackHost } from "../config/mod.ts";
import type { Policy } from "../config/types.ts";
import { checkPinStrength } from "./server/pin.ts";

/** The resolved, frozen settings of the co-hosted authorization server. */
export interface AuthSettingsResolved {
  /** The issuer identifier: the base origin, no trailing slash (RFC 8414 §2). */
  readonly issuer: string;
  /** The canonical resource identifier `${issuer}/mcp` (RFC 8707, MCP spec). */
  readonly resource: string;
  /** Path-based RFC 9728 metadata URL, the one 401 challenges point to. */
  readonly protectedResourceMetadataUrl: string;
  /** Lifetime of the access tokens issued, in seconds (`HTMCP_OAUTH_ACCESS_TOKEN_TTL_S`). */
  readonly accessTokenTtlSeconds: number;
  /** Whether the PKCE `plain` method is accepted besides `S256` (`[auth] allow_plain_pkce`). */
  readonly allowPlainPkce: boolean;
  /** Byte limit of every body this server reads (registration, token, approval form). */
  readonly maxBodyBytes: number;
  /** The admin PIN, or null: approval is then refused with advice on setting it. */
  readonly adminPin: string | null;
  /** Whether to refuse issuing when the audit log cannot be written. */
  readonly auditFailClosed: boolean;
  /** Client-id metadata document URLs or hosts we may fetch; empty: the feature is off. */
  readonly clientIdMetadataAllow: readonly string[];
}

export type ResolveSettingsResult =
  | { readonly ok: true; readonly settings: AuthSettingsResolved }
  | { readonly ok: false; readonly message: string };

/** The host names OAuth 2.1 §8.4.2 and we treat as this machine: the one shared predicate. */
export { isLoopbackHost };

/**
 * Resolves the settings.
 *
 * @param policy The loaded policy (`http.baseUrl` tells whether the operator set a base URL).
 * @param baseUrl The externally visible origin the transport serves under.
 * @param adminPin `HTMCP_OAUTH_ADMIN_PIN`, or null when unset.
 * @returns The settings, or a one-sentence reason the server must not start.
 */
export function resolveAuthSettings(
  policy: Policy,
  baseUrl: string,
  adminPin: string | null,
): ResolveSettingsResult {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return { ok: false, message: `The base URL "${baseUrl}" is not a valid URL.` };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return { ok: false, message: `The base URL "${baseUrl}" must use https.` };
  }
  if (url.username !== "" || url.password !== "") {
    return { ok: false, message: `The base URL "${baseUrl}" must not contain a user name.` };
  }
  // RFC 8414 §2: the issuer "has no query or fragment components"; a path would
  // move every well-known URL, which the MCP clients we serve do not all follow.
  if (url.pathname !== "/" || url.search !== "" || url.hash !== "" || baseUrl.includes("#")) {
    return {
      ok: false,
      message: `The base URL "${baseUrl}" must be an origin only (no path, query or fragment).`,
    };
  }
  const loopback = isLoopbackHost(url.hostname);
  // OAuth 2.1 §1.5: authorization server endpoints require TLS; a loopback
  // listener never leaves the machine.
  if (url.protocol === "http:" && !loopback) {
    return {
      ok: false,
      message:
        `The base URL "${baseUrl}" uses plain http on a non-loopback host; set [http] base_url to an https origin.`,
    };
  }
  if (policy.auth.mode === "external") {
    // No approval page exists in external mode (the provider signs users in),
    // so there is no PIN to require.
  } else if (adminPin !== null) {
    const strength = checkPinStrength(adminPin);
    if (!strength.ok) return { ok: false, message: strength.message };
  } else if (policy.http.baseUrl !== null || !loopback) {
    return {
      ok: false,
      message:
        `HTMCP_OAUTH_ADMIN_PIN must be set (at least 8 characters, not a placeholder) when the server is reachable at "${url.origin}".`,
    };
  }
  const issuer = url.origin;
  const settings: AuthSettingsResolved = Object.freeze({
    issuer,
    resource: `${issuer}/mcp`,
    protectedResourceMetadataUrl: `${issuer}/.well-known/oauth-protected-resource/mcp`,
    accessTokenTtlSeconds: policy.auth.accessTokenTtlSeconds,
    allowPlainPkce: policy.auth.allowPlainPkce,
    maxBodyBytes: policy.http.maxRegistrationBytes,
    adminPin,
    auditFailClosed: policy.auditFailMode === "closed",
    clientIdMetadataAllow: policy.auth.clientIdMetadataAllow,
  });
  return { ok: true, settings };
}
