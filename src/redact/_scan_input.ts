/**
 * The per-call view of the text that detectors share.
 *
 * @module
 */
import type { ScanInput } from "./types.ts";

const UPPER_ASCII = /[A-Z]+/g;

/**
 * Lower-cases ASCII letters only. `String.prototype.toLowerCase` is much
 * faster and is used when it keeps the length, but a few characters (U+0130
 * "İ") grow when lower-cased, which would shift every later index.
 */
function lowerKeepingIndices(text: string): string {
  const fast = text.toLowerCase();
  if (fast.length === text.length) return fast;
  return text.replace(UPPER_ASCII, (run) => run.toLowerCase());
}

/** Wraps `text` so the lower-cased copy is built at most once, and only if a detector asks. */
export function createScanInput(text: string): ScanInput {
  let lower: string | null = null;
  return {
    text,
    lower: () => (lower ??= lowerKeepingIndices(text)),
  };
}
