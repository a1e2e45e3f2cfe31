/**
 * Redact, then cut to the output cap: what the executor applies to each
 * captured stream, so that a secret straddling the cap is never half-shown.
 *
 * Contract with the executor:
 *
 * 1. Capture up to `limitBytes + REDACTION_LOOKAHEAD_BYTES` bytes of the
 *    stream (decode with replacement), and note whether the stream had more
 *    (`windowWasCut`).
 * 2. Call `redactAndTruncate(redactor, captured, limitBytes, windowWasCut)`.
 * 3. Report `totalStreamBytes - result.sourceBytes` bytes as dropped.
 *
 * Why the lookahead: detectors must see a secret whole to recognise it. Any
 * secret that starts before the cap ends inside the lookahead (every bounded
 * detector matches far less than `REDACTION_LOOKAHEAD_BYTES`; PEM blocks,
 * assignments, Authorization values and high-entropy runs are recognised
 * from their beginning even when cut). When the window was cut, its last
 * `REDACTION_LOOKAHEAD_BYTES` are dropped unseen: redaction can shrink the
 * text (a 3 KiB key becomes a 24-byte marker), and without that rule the
 * window's end, where a secret may be cut too short to recognise, could slide
 * under the cap.
 *
 * @module
 */
import { ScratchBuffer } from "./_scan_input.ts";
import type { RedactionResult, RedactionSpan, Redactor } from "./types.ts";

/**
 * How many bytes beyond the cap the executor should capture. Larger than any
 * bounded detector's longest match (4 KiB for a PyPI token, 1 KiB for URL
 * userinfo) with a wide margin for operator patterns.
 */
export const REDACTION_LOOKAHEAD_BYTES = 64 * 1024;

/** The redacted, capped text and its byte accounting. */
export interface TruncatedRedaction {
  /** Redacted text whose UTF-8 form is at most `limitBytes`; never ends inside a marker. */
  readonly text: string;
  /** True when anything was left out (the window was cut, or the text exceeded the cap). */
  readonly truncated: boolean;
  /** UTF-8 length of `text`. */
  readonly keptBytes: number;
  /**
   * UTF-8 length of the prefix of the input that `text` stands for. The
   * input is decoded text, so where the stream held invalid UTF-8 (each bad
   * byte became a 3-byte U+FFFD) this can exceed the raw bytes a little.
   */
  readonly sourceBytes: number;
}

const encoder = new TextEncoder();
/** Encoding scratch: these functions are synchronous, so one buffer serves every call. */
const scratch = new ScratchBuffer();

/**
 * The longest prefix of `text[0, end)` whose UTF-8 form fits in `maxBytes`,
 * never splitting a character or a surrogate pair: `{ chars, bytes }`.
 */
function utf8Prefix(
  text: string,
  maxBytes: number,
  end = text.length,
): { chars: number; bytes: number } {
  if (maxBytes <= 0 || end <= 0) return { chars: 0, bytes: 0 };
  const part = end === text.length ? text : text.slice(0, end);
  const room = Math.min(maxBytes, part.length * 3);
  const { read, written } = encoder.encodeInto(part, scratch.take(room).subarray(0, room));
  return { chars: read, bytes: written };
}

/**
 * Measures `text` as UTF-8 without keeping the encoding.
 *
 * @returns the UTF-8 length of `text` (lone surrogates count as U+FFFD)
 *
 * @example
 * ```ts
 * import { utf8ByteLength } from "./truncate.ts";
 * utf8ByteLength("h\u00e9"); // 3
 * ```
 */
export function utf8ByteLength(text: string): number {
  return utf8Prefix(text, text.length * 3).bytes;
}

/** Output index for input index `source`: a position inside a span maps to its marker's start. */
function sourceToOutput(spans: readonly RedactionSpan[], source: number): number {
  let delta = 0;
  for (const span of spans) {
    if (source <= span.start) break;
    if (source < span.end) return span.outStart;
    delta = span.outEnd - span.end;
  }
  return source + delta;
}

/** Input index for output index `out`, which is never inside a marker. */
function outputToSource(spans: readonly RedactionSpan[], out: number): number {
  let delta = 0;
  for (const span of spans) {
    if (out <= span.outStart) break;
    delta = span.outEnd - span.end;
  }
  return out - delta;
}

/** Moves `cut` back to the start of the marker it falls inside, if any. */
function outsideMarkers(spans: readonly RedactionSpan[], cut: number): number {
  for (const span of spans) {
    if (cut <= span.outStart) break;
    if (cut < span.outEnd) return span.outStart;
  }
  return cut;
}

/**
 * Redacts `text`, then cuts it to `limitBytes` of UTF-8 so that no marker is
 * cut and no part of a secret that straddles the cap appears.
 *
 * @param redactor the server's redactor (when disabled, only the cut happens)
 * @param text the captured window, decoded
 * @param limitBytes the output cap (`limits.max_output_bytes`)
 * @param windowWasCut true when the stream continued past the captured window
 * @returns the text to show and its byte accounting
 * @throws {RangeError} when `limitBytes` is negative or not an integer
 *
 * @example
 * ```ts
 * import { createRedactor, redactAndTruncate } from "./mod.ts";
 * const redactor = createRedactor({ enabled: true, entropyFallback: false, extraPatterns: [] });
 * const out = redactAndTruncate(redactor, "key AKIAIOSFODNN7EXAMPLE", 10, false);
 * // out.text === "key " (the marker did not fit whole), out.truncated === true
 * ```
 */
export function redactAndTruncate(
  redactor: Redactor,
  text: string,
  limitBytes: number,
  windowWasCut: boolean,
): TruncatedRedaction {
  checkLimit(limitBytes);
  return truncateRedacted(text, redactor.redactWithSpans(text), limitBytes, windowWasCut);
}

/** @throws {RangeError} when `limitBytes` is negative or not an integer */
export function checkLimit(limitBytes: number): void {
  if (!Number.isSafeInteger(limitBytes) || limitBytes < 0) {
    throw new RangeError(`limitBytes must be a non-negative integer, got ${limitBytes}.`);
  }
}

/**
 * The cut of `redactAndTruncate` for a text already redacted: `redaction`
 * is `text`'s redaction with its spans.
 */
export function truncateRedacted(
  text: string,
  redaction: RedactionResult,
  limitBytes: number,
  windowWasCut: boolean,
): TruncatedRedaction {
  const { text: redacted, spans } = redaction;
  let sourceLimit = text.length;
  if (windowWasCut) {
    const shown = utf8ByteLength(text) - REDACTION_LOOKAHEAD_BYTES;
    sourceLimit = utf8Prefix(text, shown).chars;
  }
  const outLimit = sourceToOutput(spans, sourceLimit);
  const fit = utf8Prefix(redacted, limitBytes, outLimit);
  const cut = outsideMarkers(spans, fit.chars);
  const kept = cut === fit.chars ? fit.bytes : utf8Prefix(redacted, limitBytes, cut).bytes;
  const sourceEnd = outputToSource(spans, cut);
  // With no marker before the cut, the kept text is the source's own prefix.
  const noMarkerBefore = spans.length === 0 || spans[0]!.outStart >= cut;
  const sourceBytes = noMarkerBefore ? kept : utf8Prefix(text, Infinity, sourceEnd).bytes;
  return {
    text: cut === redacted.length ? redacted : redacted.slice(0, cut),
    truncated: windowWasCut || cut < redacted.length,
    keptBytes: kept,
    sourceBytes,
  };
}
