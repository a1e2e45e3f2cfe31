/**
 * Merging detector findings: sort, drop findings inside markers already in
 * the text, and union overlaps so a secret two detectors saw differently is
 * hidden whole under one marker.
 *
 * @module
 */
import { existingMarkers } from "./_markers.ts";

/** A finding with the rank (position in the detector list) of its detector. */
export interface RankedSpan {
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

/**
 * Sorts, drops findings inside existing markers, and unions overlaps; a
 * union is named after its lowest-ranked (most specific) finding and keeps
 * that rank, so merged findings of several views can be merged again.
 */
export function mergeSpans(
  found: RankedSpan[],
  text: string,
  kinds: ReadonlySet<string>,
): RankedSpan[] {
  if (found.length === 0) return [];
  const markers = existingMarkers(text, kinds);
  found.sort((a, b) => a.start - b.start || a.rank - b.rank);
  const merged: RankedSpan[] = [];
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
    if (current !== null) merged.push(current);
    current = { ...span };
  }
  if (current !== null) merged.push(current);
  return merged;
}
