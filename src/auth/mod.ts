/**
 * OAuth 2.1 for the Streamable HTTP transport: a co-hosted authorization
 * server (issuing, `server/`), the bearer check of the `/mcp` resource
 * (checking, `bearer/`), and their persistent state (`state/`). Denies on
 * any failure: unknown client, unregistered redirect, missing PKCE or
 * resource, wrong PIN, bad or revoked token.
 *
 * @module
 */
export { createAuthorizationServer } from "./authorization_server.ts";
export type {
  AuthorizationServer,
  AuthorizationServerOptions,
  AuthorizationServerResult,
  BearerOk,
  BearerRefused,
} from "./types.ts";
export type { AuditSink } from "./audit_sink.ts";
export type { BearerFailureReason } from "./bearer/mod.ts";
export type { RequestInfo } from "./server/mod.ts";
export { type AuthSettingsResolved, isLoopbackHost } from "./settings.ts";
export { checkPinStrength, DEFAULT_FAILURE_LIMITS, type FailureLimits } from "./server/mod.ts";
export {
  DEFAULT_SCOPES,
  formatScopes,
  type ParseScopeResult,
  parseScopeString,
  type Scope,
  SCOPES,
  TOOL_SCOPES,
} from "./scopes.ts";
export {
  type ApprovedClients,
  type ClientRecord,
  ClientRegistry,
  type RevokeClientResult,
} from "./state/mod.ts";
