/**
 * The issuing side: metadata, registration, authorize + approval, token.
 *
 * @module
 */
export { createRouter } from "./router.ts";
export {
  findClient,
  MAX_PENDING_CLIENTS,
  PENDING_CLIENT_TTL_MS,
  type RequestInfo,
  type ServerDeps,
} from "./deps.ts";
export { CODE_TTL_MS, CodeStore } from "./codes.ts";
export { DEFAULT_FAILURE_LIMITS, FailureLimiter, type FailureLimits } from "./rate_limit.ts";
export { checkPinStrength, MIN_PIN_LENGTH } from "./pin.ts";
export { ACCESS_TOKEN_TYPE, signAccessToken } from "./access_token.ts";
export { type RegisteredClient, REGISTRATION_LIMITS } from "./registration.ts";
export { type AuthorizeTransaction, MAX_TRANSACTIONS, TRANSACTION_TTL_MS } from "./transaction.ts";
export { escapeHtml } from "./html.ts";
