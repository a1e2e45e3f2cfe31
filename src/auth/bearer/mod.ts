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
