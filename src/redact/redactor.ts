/**
 * `createRedactor`: runs every detector over the text, merges what they found
 * and replaces each merged span with `[REDACTED:<kind>]`.
 *
 * Overlapping findings merge into one span covering all of them, so a secret
 * two detectors saw differently is never half-shown; the marker names the
 * kind of the detector listed first (most specific). Findings that lie wholly
 * inside a marker already in the text are dropped, which makes redaction
 * idempotent: `redact(redact(x)) === redact(x)`.
 *
 * @module
 */
import type { Policy } from "../config/types.ts";
import { createScanInput, ScratchBuffer } from "./_scan_input.ts";
import { createAssignmentDetector } from "./assignment_detector.ts";
import { createAuthorizationDetector } from "./authorization_detector.ts";
import { createEntropyDetector } from "./entropy_detector.ts";
import { createExtraPatternDetectors } from "./extra_patterns.ts";
import { createPemDetector } from "./pem_detector.ts";
import { createTokenDetector } from "./token_detectors.ts";
import { createUrlCredentialsDetector } from "./url_credentials_detector.ts";
import type { DetectedSpan, Detector, RedactionResult, RedactionSpan, Redactor } from "./types.ts";

/** The `[redaction]` settings of a loaded policy. */
export type RedactionSettings = Policy["redaction"];

const MARKER_OPEN = "[REDACTED:";
/**
 * `indexOf` searches for needles of up to six characters by the first
 * character, and measurably slower for longer ones; `REDAC` (with a rare
 * upper-case R) finds candidates, the rest is checked in place.
 */
const MARKER_ANCHOR = "REDAC";
/** Marker kinds are at most 64 characters (built-in kinds, or policy pattern names). */
const MAX_MARKER_KIND = 64;

/** Builds the marker that replaces a secret of `kind`. */
export function redactionMarker(kind: string): string {
  return `${MARKER_OPEN}${kind}]`;
}

interface RankedSpan {
  start: number;
  end: number;
  kind: string;
  rank: number;
}

/** Markers already present in `text`, as [start, end) pairs in order. */
function existingMarkers(text: string): number[] {
  const ranges: number[] = [];
  for (
    let hit = text.indexOf(MARKER_ANCHOR);
    hit !== -1;
    hit = text.indexOf(MARKER_ANCHOR, hit + 1)
  ) {
    const at = hit - 1;
    if (at < 0 || !text.startsWith(MARKER_OPEN, at)) continue;
    const kindStart = at + MARKER_OPEN.length;
    let i = kindStart;
    while (i < text.length && i - kindStart <= MAX_MARKER_KIND) {
      const c = text.charCodeAt(i);
      if (c === 93 || c === 10 || c === 91) break; // `]`, newline, `[`
      i++;
    }
    if (text.charCodeAt(i) === 93 && i > kindStart) ranges.push(at, i + 1);
  }
  return ranges;
}

/** True when [start, end) lies within one of the sorted marker ranges. */
function insideMarker(markers: readonly number[], start: number, end: number): boolean {
  let lo = 0;
  let hi = markers.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const mStart = markers[2 * mid]!;
    const mEnd = markers[2 * mid + 1]!;
    if (end <= mStart) hi = mid - 1;
    else if (start >= mEnd) lo = mid + 1;
    else return start >= mStart && end <= mEnd;
  }
  return false;
}

/** Sorts, drops findings inside existing markers, and unions overlaps. */
function mergeSpans(found: RankedSpan[], text: string): DetectedSpan[] {
  if (found.length === 0) return [];
  const markers = existingMarkers(text);
  found.sort((a, b) => a.start - b.start || a.rank - b.rank);
  const merged: DetectedSpan[] = [];
  let current: RankedSpan | null = null;
  for (const span of found) {
    if (span.end <= span.start) continue;
    if (markers.length > 0 && insideMarker(markers, span.start, span.end)) continue;
    if (current !== null && span.start < current.end) {
      if (span.end > current.end) current.end = span.end;
      if (span.rank < current.rank) {
        current.rank = span.rank;
        current.kind = span.kind;
      }
      continue;
    }
    if (current !== null) {
      merged.push({ start: current.start, end: current.end, kind: current.kind });
    }
    current = { ...span };
  }
  if (current !== null) merged.push({ start: current.start, end: current.end, kind: current.kind });
  return merged;
}

/** The detectors for `settings`, most specific first; order is the tie-break rank. */
function buildDetectors(settings: RedactionSettings): Detector[] {
  const detectors: Detector[] = [
    createPemDetector(),
    createTokenDetector(),
    createAuthorizationDetector(),
    createUrlCredentialsDetector(),
    ...createExtraPatternDetectors(settings.extraPatterns),
    createAssignmentDetector(),
  ];
  if (settings.entropyFallback) detectors.push(createEntropyDetector());
  return detectors;
}

function applySpans(text: string, spans: readonly DetectedSpan[]): RedactionResult {
  if (spans.length === 0) return { text, spans: [] };
  const out: RedactionSpan[] = [];
  let result = "";
  let from = 0;
  for (const span of spans) {
    result += text.slice(from, span.start);
    const outStart = result.length;
    result += redactionMarker(span.kind);
    out.push({ ...span, outStart, outEnd: result.length });
    from = span.end;
  }
  result += text.slice(from);
  return { text: result, spans: out };
}

/**
 * Builds a redactor for the policy's `[redaction]` settings. Detectors and
 * their regexes are compiled once, here.
 *
 * @param settings `policy.redaction`
 * @returns a redactor whose functions can be passed around unbound
 *
 * @example
 * ```ts
 * import { createRedactor } from "./mod.ts";
 * const { redact } = createRedactor({ enabled: true, entropyFallback: false, extraPatterns: [] });
 * redact("AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE");
 * // "AWS_ACCESS_KEY_ID=[REDACTED:aws_access_key_id]"
 * ```
 */
export function createRedactor(settings: RedactionSettings): Redactor {
  const enabled = settings.enabled;
  const detectors = enabled ? buildDetectors(settings) : [];
  const scratch = new ScratchBuffer();

  const findSpans = (text: string): readonly DetectedSpan[] => {
    if (!enabled || text.length === 0) return [];
    const input = createScanInput(text, scratch);
    const found: RankedSpan[] = [];
    detectors.forEach((detector, rank) => {
      detector.scan(input, (start, end, kind) => found.push({ start, end, kind, rank }));
    });
    return mergeSpans(found, text);
  };
  const redactWithSpans = (text: string): RedactionResult => applySpans(text, findSpans(text));
  const redact = (text: string): string => redactWithSpans(text).text;
  return Object.freeze({ enabled, redact, redactWithSpans, findSpans });
}
