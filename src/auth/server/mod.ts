/**
 * The issuing side of the co-hosted OAuth 2.1 authorization server:
 * metadata, dynamic registration, authorize with the operator's PIN
 * approval, and the token endpoint. `createAuthorizationServer`
 * (`src/auth/mod.ts`) builds its {@linkcode ServerDeps} and serves
 * {@linkcode createRouter}; the transport shares its
 * {@linkcode FailureLimiter} with the approvals page.
 *
 * Denies on failure: an unknown or revoked client, a redirect URI not
 * registered exactly, a missing PKCE challenge or resource, a wrong PIN or
 * a replayed code ends the flow with the OAuth error, never a token. Every
 * table a stranger can fill is bounded.
 *
 * @module
 */
export { createRouter } from "./router.ts";
export {
  findClient,
  type KnownClient,
  MAX_PENDING_CLIENTS,
  PENDING_CLIENT_TTL_MS,
  type RequestInfo,
  type ServerDeps,
} from "./deps.ts";
export { ExpiringMap, type WhenFull } from "../_expiring_map.ts";
export { CODE_MEMORY_MS, CODE_TTL_MS, type CodeGrant, CodeStore, MAX_CODES } from "./codes.ts";
export {
  DEFAULT_FAILURE_LIMITS,
  FailureLimiter,
  type FailureLimits,
  type LimitCheck,
} from "./rate_limit.ts";
export { checkPinStrength, MIN_PIN_LENGTH, type PinStrength } from "./pin.ts";
export { ACCESS_TOKEN_TYPE, type IssuedToken, signAccessToken } from "./access_token.ts";
export { type RegisteredClient, REGISTRATION_LIMITS } from "./registration.ts";
export { type AuthorizeTransaction, MAX_TRANSACTIONS, TRANSACTION_TTL_MS } from "./transaction.ts";
export { escapeHtml } from "./html.ts";
