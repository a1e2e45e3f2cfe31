/**
 * The checking side: bearer extraction, verification and the refusals.
 *
 * @module
 */
export { bearerRefusal, describeFailure, insufficientScopeResponse } from "./challenge.ts";
export { extractBearerToken, type ExtractResult } from "./extract.ts";
export {
  type BearerFailureReason,
  IAT_SKEW_SECONDS,
  type VerifiedToken,
  type VerifierContext,
  verifyAccessToken,
  type VerifyResult,
} from "./verify.ts";
export { type BearerCheck, bearerChecker } from "./check.ts";
export { discoverJwksUri } from "./verify_external.ts";
export {
  DEFAULT_FETCH_BOUNDS,
  type FetchBounds,
  type FetchFailure,
  fetchJsonObject,
  ProviderFetchError,
} from "./provider_fetch.ts";
// The scopes the checks take and return, and the audit sink the check writes
// refusals to, so the surface is complete.
export type { Scope } from "../scopes.ts";
export type { AuditSink } from "../audit_sink.ts";
