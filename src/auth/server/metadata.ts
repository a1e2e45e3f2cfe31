/**
 * Discovery documents: RFC 8414 authorization server metadata and RFC 9728
 * protected resource metadata. Both are derived from the settings alone, so
 * they are built once.
 *
 * @module
 */
import { SCOPES } from "../scopes.ts";
import type { AuthSettingsResolved } from "../settings.ts";

/** RFC 8414 §2 metadata for our issuer. */
export function authorizationServerMetadata(
  settings: AuthSettingsResolved,
): Record<string, unknown> {
  const issuer = settings.issuer;
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    registration_endpoint: `${issuer}/register`,
    scopes_supported: [...SCOPES],
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code"],
    token_endpoint_auth_methods_supported: ["none"],
    // MCP: clients "MUST refuse to proceed" without S256 listed here.
    code_challenge_methods_supported: settings.allowPlainPkce ? ["S256", "plain"] : ["S256"],
    // RFC 9207 §3: every authorization response carries `iss`.
    authorization_response_iss_parameter_supported: true,
    // Advertised only when the operator allowlisted documents to fetch.
    ...(settings.clientIdMetadataAllow.length > 0
      ? { client_id_metadata_document_supported: true }
      : {}),
  };
}

/**
 * RFC 9728 §2 metadata for the `/mcp` resource: our own issuer, or the
 * external identity provider's in external mode.
 */
export function protectedResourceMetadata(
  settings: AuthSettingsResolved,
  authorizationServer: string = settings.issuer,
): Record<string, unknown> {
  return {
    resource: settings.resource,
    authorization_servers: [authorizationServer],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ["header"],
    resource_name: "htmcp",
  };
}

/** Where RFC 9728 metadata is served: path-based first, then the root form. */
export const PROTECTED_RESOURCE_METADATA_PATHS: ReadonlySet<string> = new Set([
  "/.well-known/oauth-protected-resource/mcp",
  "/.well-known/oauth-protected-resource",
]);

/**
 * Where RFC 8414 metadata is served: the root forms and the path-inserted and
 * path-appended variants MCP clients try when they derive the issuer from the
 * `/mcp` URL (OpenID Connect Discovery included, as the MCP spec lists it).
 */
export const AUTHORIZATION_SERVER_METADATA_PATHS: ReadonlySet<string> = new Set([
  "/.well-known/oauth-authorization-server",
  "/.well-known/openid-configuration",
  "/.well-known/oauth-authorization-server/mcp",
  "/.well-known/openid-configuration/mcp",
  "/mcp/.well-known/openid-configuration",
]);
