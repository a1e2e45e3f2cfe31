/**
 * The configuration loader's public surface: `loadPolicy` and the `Policy`
 * types every other layer reads, the defaults and bounds the loader applies
 * (so tests and `htmcp check` quote the same numbers), the refusal
 * predicates the executor asks again, and the operator's always-allow file.
 * A bad policy is a value with one sentence, never a throw.
 *
 * @module
 */
export {
  DEFAULT_AUDIT_LOG_NAME,
  LIMIT_DEFAULTS,
  type LoadOptions,
  type LoadOverrides,
  loadPolicy,
  type LoadResult,
} from "./load.ts";
export { MAX_UID, NUMBER_BOUNDS } from "./schema.ts";
export { sandboxOptOutRefusal } from "./sandbox.ts";
export { FULL_CONTROL_RLIMITS, FULL_CONTROL_SHELL, fullControlRefusal } from "./full_control.ts";
export { ACCESS_TOKEN_TTL, HTTP_DEFAULTS } from "./remote.ts";
export { REFUSED_ENV_NAMES, REFUSED_ENV_PREFIXES } from "./env_names.ts";
export { EXTRA_PATTERN_FLAGS } from "./patterns.ts";
export * from "./types.ts";
export { isLoopbackHost } from "./loopback.ts";
export { checkOtlpEndpoint, otlpNetGrant, TELEMETRY_DEFAULTS } from "./observability.ts";
export { type AlwaysFile, type AlwaysLoad, loadAlwaysFile } from "./always_allow.ts";
// The step result `checkOtlpEndpoint` returns, so the surface is complete.
export type { Checked } from "./_checked.ts";
