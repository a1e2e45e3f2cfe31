/**
 * Detection in bounded windows, so that a large output can be redacted a
 * slice at a time with the event loop served in between (`sliced.ts`).
 *
 * Each window reads its slice plus context on both sides and keeps the
 * findings that *start* in its slice; the next slice starts where the last
 * kept finding ended. Every bounded detector matches far less than the right
 * context (`REDACTION_LOOKAHEAD_BYTES` characters), so a secret that
 * straddles a slice end is read whole by the window it starts in. A finding
 * that runs to the window's right edge may be longer than the window (a PEM
 * block, a value running to the end of a megabyte line): the window is then
 * read again with twice the right context, until the finding ends inside it
 * or the window reaches the text's end. Slices end at a line break when one
 * is near, since most detectors read within a line.
 *
 * @module
 */
import type { RankedSpan } from "./_merge.ts";

/** Context read before a slice (a key before its value, a word before a token). */
export const LEFT_CONTEXT = 4 * 1024;
/** Context read after a slice: the output cap's lookahead, larger than any bounded match. */
export const RIGHT_CONTEXT = 64 * 1024;
/** A finding ending this close to a window's right edge may have been cut by it. */
const EDGE_MARGIN = 256;

/**
 * Findings of `detect` over `text`, one slice of at most `sliceChars`
 * characters per step; the generator yields between steps.
 */
export function* detectInWindows(
  text: string,
  sliceChars: number,
  detect: (window: string) => RankedSpan[],
): Generator<void, RankedSpan[]> {
  const n = text.length;
  if (n <= sliceChars) return detect(text);
  const out: RankedSpan[] = [];
  let a = 0;
  while (a < n) {
    let b = Math.min(n, a + sliceChars);
    if (b < n) {
      const lineBreak = text.lastIndexOf("\n", b - 1);
      if (lineBreak + 1 > a + (sliceChars >> 1)) b = lineBreak + 1;
    }
    let right = RIGHT_CONTEXT;
    for (;;) {
      const from = Math.max(0, a - LEFT_CONTEXT);
      const to = Math.min(n, b + right);
      let cut = false;
      let next = b;
      const kept: RankedSpan[] = [];
      for (const span of detect(text.slice(from, to))) {
        const start = span.start + from;
        if (start < a || start >= b) continue;
        const end = span.end + from;
        if (to < n && end > to - EDGE_MARGIN) cut = true;
        if (end > next) next = end;
        kept.push({ start, end, kind: span.kind, rank: span.rank });
      }
      if (cut) {
        right *= 2;
        continue;
      }
      for (const span of kept) out.push(span);
      a = next;
      break;
    }
    if (a < n) yield;
  }
  return out;
}
