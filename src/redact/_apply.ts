/**
 * Replacing merged findings with their markers.
 *
 * @module
 */
import { redactionMarker } from "./_markers.ts";
import type { DetectedSpan, RedactionResult, RedactionSpan } from "./types.ts";

/** `text` with each of the sorted, non-overlapping `spans` replaced by its marker. */
export function applySpans(text: string, spans: readonly DetectedSpan[]): RedactionResult {
  const steps = applySpansSteps(text, spans, Infinity);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * `applySpans` as steps: yields after every `sliceChars` characters of
 * `text` have been copied (a dense output has a marker every few words, and
 * building hundreds of thousands of them is a slice of work of its own).
 */
export function* applySpansSteps(
  text: string,
  spans: readonly DetectedSpan[],
  sliceChars: number,
): Generator<void, RedactionResult> {
  if (spans.length === 0) return { text, spans: [] };
  const out: RedactionSpan[] = new Array(spans.length);
  const parts: string[] = [];
  let length = 0;
  let from = 0;
  let stepEnd = sliceChars;
  for (let i = 0; i < spans.length; i++) {
    const { start, end, kind } = spans[i]!;
    length += start - from;
    parts.push(text.slice(from, start));
    const marker = redactionMarker(kind);
    out[i] = { start, end, kind, outStart: length, outEnd: length + marker.length };
    length += marker.length;
    parts.push(marker);
    from = end;
    if (from >= stepEnd) {
      stepEnd = from + sliceChars;
      yield;
    }
  }
  parts.push(text.slice(from));
  return { text: parts.join(""), spans: out };
}
