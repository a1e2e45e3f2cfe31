/**
 * The marker syntax, `[REDACTED:<kind>]`, and recognising markers already in
 * a text. Only markers of kinds this redactor can produce count: text shaped
 * like a marker around something else (`[REDACTED:ghp_...]`, `[REDACTED: pw]`)
 * is ordinary text, so it cannot be used to smuggle a secret past redaction.
 *
 * @module
 */

/** Every marker starts with this. */
export const MARKER_OPEN = "[REDACTED:";
/**
 * `indexOf` searches for needles of up to six characters by the first
 * character, and measurably slower for longer ones; `REDAC` (with a rare
 * upper-case R) finds candidates, the rest is checked in place.
 */
const MARKER_ANCHOR = "REDAC";
/** Kinds are at most 64 characters (built-in kinds, or policy pattern names). */
const MAX_KIND = 64;
const CLOSE = 93; // `]`

/** Builds the marker that replaces a secret of `kind`. */
export function redactionMarker(kind: string): string {
  return `${MARKER_OPEN}${kind}]`;
}

/**
 * If a marker of a known kind starts at `at`, the index after its `]`;
 * otherwise -1.
 */
export function markerEndAt(text: string, at: number, kinds: ReadonlySet<string>): number {
  if (!text.startsWith(MARKER_OPEN, at)) return -1;
  const kindStart = at + MARKER_OPEN.length;
  const close = text.indexOf("]", kindStart);
  if (close === -1 || close - kindStart > MAX_KIND) return -1;
  return kinds.has(text.slice(kindStart, close)) ? close + 1 : -1;
}

/** Known markers already present in `text`, as sorted [start, end) pairs. */
export function existingMarkers(text: string, kinds: ReadonlySet<string>): number[] {
  const ranges: number[] = [];
  for (
    let hit = text.indexOf(MARKER_ANCHOR);
    hit !== -1;
    hit = text.indexOf(MARKER_ANCHOR, hit + 1)
  ) {
    const end = markerEndAt(text, hit - 1, kinds);
    if (end !== -1 && text.charCodeAt(end - 1) === CLOSE) ranges.push(hit - 1, end);
  }
  return ranges;
}
