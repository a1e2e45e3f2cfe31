/**
 * Secret redaction: detectors for credentials in command output and command
 * text, and the redact-then-truncate step the executor applies before the
 * output cap.
 *
 * Redaction is best-effort defense in depth, never a boundary: a command that
 * re-encodes a secret (base64, `rev`, hex dump) defeats every pattern. It
 * exists so that the common case (a config file, `env`, a verbose client log)
 * does not hand a credential to the model or the audit log.
 *
 * @module
 */
export { createRedactor, type RedactionSettings } from "./redactor.ts";
export { redactionMarker } from "./_markers.ts";
export { hiddenWordCount, redactArgv } from "./argv.ts";
export {
  redactAndTruncate,
  REDACTION_LOOKAHEAD_BYTES,
  type TruncatedRedaction,
  utf8ByteLength,
} from "./truncate.ts";
export {
  redactAndTruncateInSlices,
  redactInSlices,
  REDACTION_SLICE_CHARS,
  type SliceOptions,
} from "./sliced.ts";
export { ENTROPY_MIN_LENGTH } from "./entropy_detector.ts";
export type { DetectedSpan, RedactionResult, RedactionSpan, Redactor } from "./types.ts";
