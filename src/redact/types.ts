/**
 * Shared shapes of the redaction layer: what a detector reports, what the
 * redactor returns.
 *
 * @module
 */

/** One stretch of the input a detector wants hidden, in UTF-16 indices of the input. */
export interface DetectedSpan {
  /** First hidden index (inclusive). */
  readonly start: number;
  /** Index after the last hidden character (exclusive). */
  readonly end: number;
  /** Goes into the marker: `[REDACTED:<kind>]`. */
  readonly kind: string;
}

/**
 * One marker in redacted text, with where it sits in the output and which
 * stretch of the input it stands for. Truncation needs both: it must never cut
 * inside a marker, and it must report how much of the *source* it kept.
 */
export interface RedactionSpan extends DetectedSpan {
  /** Index of the marker's `[` in the redacted text. */
  readonly outStart: number;
  /** Index after the marker's `]` in the redacted text. */
  readonly outEnd: number;
}

/** Redacted text together with its markers, in order. */
export interface RedactionResult {
  /** The text with every finding replaced by its marker. */
  readonly text: string;
  /** One entry per marker, in order. */
  readonly spans: readonly RedactionSpan[];
}

/**
 * A configured redactor. Its functions are plain closures, never methods that
 * read `this`, so `redactor.redact` may be passed around on its own.
 */
export interface Redactor {
  /** False when `[redaction] enabled = false`: every function then returns its input unchanged. */
  readonly enabled: boolean;
  /** Replaces every detected secret with `[REDACTED:<kind>]`. */
  readonly redact: (text: string) => string;
  /** Like `redact`, but also says where each marker is and what it replaced. */
  readonly redactWithSpans: (text: string) => RedactionResult;
  /** The merged, sorted, non-overlapping spans `redact` would replace; for tests and tooling. */
  readonly findSpans: (text: string) => readonly DetectedSpan[];
}

/**
 * Detectors report through this callback. Giving each detector its own
 * `emit` lets the redactor rank overlapping findings by detector order
 * without the detector knowing its rank.
 */
export type Emit = (start: number, end: number, kind: string) => void;

/** A detector: scans the whole input once and emits what it finds. */
export interface Detector {
  /** For diagnostics and tests only. */
  readonly name: string;
  readonly scan: (input: ScanInput, emit: Emit) => void;
  /**
   * Scans again as if the text were cut to `[at, limit)`: `at` is where a
   * finding ends and `limit` where the next one starts. Once findings are
   * markers (`...]ghp_...[...`), that stretch is a word of its own; a
   * detector whose matches depend on word edges implements this (and
   * `scanTo`) so that redacting a second time finds nothing new.
   */
  readonly scanFrom?: (input: ScanInput, at: number, limit: number, emit: Emit) => void;
  /** The mirror of `scanFrom`: the stretch `[floor, at)` before a finding that starts at `at`. */
  readonly scanTo?: (input: ScanInput, floor: number, at: number, emit: Emit) => void;
}

/**
 * The text under scan plus derived views computed at most once per call and
 * shared by every detector that needs them.
 */
export interface ScanInput {
  readonly text: string;
  /**
   * One byte per UTF-16 code unit of `text`: ASCII as is, anything else
   * `0x80`. Same length as `text`, so indices agree. Valid only during the
   * scan (it lives in a reused buffer).
   */
  readonly bytes: () => Uint8Array;
  /**
   * If a marker this redactor could have produced starts at `at`, the index
   * after it; otherwise -1. Values that are already markers are skipped.
   */
  readonly markerEndAt: (at: number) => number;
}

/**
 * The `[redaction]` settings of a loaded policy (`Policy["redaction"]` is one):
 * whether to redact at all, the entropy fallback, and the operator patterns,
 * compiled and vetted at startup.
 */
export interface RedactionSettings {
  /** `[redaction] enabled`: false turns every redactor function into the identity. */
  readonly enabled: boolean;
  /** `[redaction] entropy_fallback`: also hide long high-entropy tokens. */
  readonly entropyFallback: boolean;
  /** `[redaction] extra_patterns`: each match becomes `[REDACTED:<name>]`. */
  readonly extraPatterns: readonly { readonly name: string; readonly regex: RegExp }[];
}
