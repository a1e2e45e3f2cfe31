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
import { existingMarkers, redactionMarker } from "./_markers.ts";
import { createScanInput, ScratchBuffer } from "./_scan_input.ts";
import { createAssignmentDetector } from "./assignment_detector.ts";
import { createAuthorizationDetector } from "./authorization_detector.ts";
import { createEntropyDetector } from "./entropy_detector.ts";
import { createExtraPatternDetectors } from "./extra_patterns.ts";
import { createPemDetector } from "./pem_detector.ts";
import { createTokenDetector, TOKEN_KINDS } from "./token_detectors.ts";
import { createUrlCredentialsDetector } from "./url_credentials_detector.ts";
import type { DetectedSpan, Detector, RedactionResult, RedactionSpan, Redactor } from "./types.ts";

/** The `[redaction]` settings of a loaded policy. */
export type RedactionSettings = Policy["redaction"];

/**
 * Bound on the boundary re-scans. Each round only looks after spans the
 * previous round created, and tokens glued end to end three deep do not
 * occur in real output; the bound keeps hostile input linear.
 */
const MAX_BOUNDARY_ROUNDS = 4;

interface RankedSpan {
  start: number;
  end: number;
  kind: string;
  rank: number;
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
function mergeSpans(
  found: RankedSpan[],
  text: string,
  kinds: ReadonlySet<string>,
): DetectedSpan[] {
  if (found.length === 0) return [];
  const markers = existingMarkers(text, kinds);
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

/** Every kind a built-in detector emits. */
const BUILT_IN_KINDS: readonly string[] = [
  "private_key",
  ...TOKEN_KINDS,
  "authorization",
  "url_credentials",
  "secret_assignment",
  "aws_secret_access_key",
  "azure_account_key",
  "high_entropy",
];

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
  // [rank, detector] for the detectors that re-scan at finding edges.
  const edgeDetectors = detectors
    .map((detector, rank) => [rank, detector] as const)
    .filter(([, d]) => d.scanFrom !== undefined || d.scanTo !== undefined);
  const kinds: ReadonlySet<string> = new Set([
    ...BUILT_IN_KINDS,
    ...settings.extraPatterns.map((pattern) => pattern.name),
  ]);

  const findSpans = (text: string): readonly DetectedSpan[] => {
    if (!enabled || text.length === 0) return [];
    const input = createScanInput(text, scratch, kinds);
    const found: RankedSpan[] = [];
    const emitters = detectors.map((_, rank) => (start: number, end: number, kind: string) => {
      found.push({ start, end, kind, rank });
    });
    detectors.forEach((detector, rank) => detector.scan(input, emitters[rank]!));
    let merged = mergeSpans(found, text, kinds);
    // A finding becomes a marker, `[...]`: word boundaries on both sides
    // that the original text may not have had (`AKIA...--ghp_...`,
    // `AIza...-----BEGIN`). Detectors that match at word edges look again
    // at each edge, until nothing new turns up, so that a second redaction
    // finds nothing the first one missed.
    // Each edge is scanned once per neighbour: `end -> limit`, `start -> floor`.
    const scannedAfter = new Map<number, number>();
    const scannedBefore = new Map<number, number>();
    for (let round = 0; round < MAX_BOUNDARY_ROUNDS; round++) {
      const before = found.length;
      for (let i = 0; i < merged.length; i++) {
        const span = merged[i]!;
        const floor = merged[i - 1]?.end ?? 0;
        const limit = merged[i + 1]?.start ?? text.length;
        if (span.end < limit && scannedAfter.get(span.end) !== limit) {
          scannedAfter.set(span.end, limit);
          for (const [rank, d] of edgeDetectors) {
            d.scanFrom?.(input, span.end, limit, emitters[rank]!);
          }
        }
        if (floor < span.start && scannedBefore.get(span.start) !== floor) {
          scannedBefore.set(span.start, floor);
          for (const [rank, d] of edgeDetectors) {
            d.scanTo?.(input, floor, span.start, emitters[rank]!);
          }
        }
      }
      if (found.length === before) break;
      merged = mergeSpans(found, text, kinds);
    }
    return merged;
  };
  const redactWithSpans = (text: string): RedactionResult => applySpans(text, findSpans(text));
  const redact = (text: string): string => redactWithSpans(text).text;
  return Object.freeze({ enabled, redact, redactWithSpans, findSpans });
}
