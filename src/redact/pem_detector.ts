/**
 * PEM private-key blocks (RFC 7468), including OpenSSH, PKCS#1/#8, encrypted
 * and PGP private keys.
 *
 * The whole block, BEGIN line to END line, becomes one marker. A block whose
 * END line is missing (output cut by the cap, `head -c` on a key file) is
 * still hidden: the span runs over every following line that looks like key
 * material (base64, `Name: value` headers, blank lines) and stops at the first
 * line that does not, so a cut key never shows its first lines and an
 * unrelated BEGIN string in source code hides nothing.
 *
 * Lines may be separated by real newlines or by the two characters `\n`, the
 * way keys sit inside JSON (a GCP service-account file, for one).
 *
 * @module
 */
import { BACKSLASH, CR, LF, SPACE, TAB, table } from "./_ascii.ts";
import { HEADER_LINE, MAX_HEADER, MAX_LABEL, PRIVATE_LABEL } from "./_pem_syntax.ts";
import type { Detector, Emit, ScanInput } from "./types.ts";

const BEGIN = "-----BEGIN ";
const ANCHOR = "BEGIN ";
const END = "-----END ";
const DASHES = "-----";

const BASE64 = table("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=");

const LOWER_N = 110;

/** True when the character at `i` ends a line: a real newline, a `\\n` escape, or text end. */
function isLineEnd(text: string, i: number): boolean {
  if (i >= text.length) return true;
  const c = text.charCodeAt(i);
  return c === LF || c === CR || (c === BACKSLASH && text.charCodeAt(i + 1) === LOWER_N);
}

/** Index of the next line's first character, after the terminator at `end`. */
function nextLineStart(text: string, end: number): number {
  if (end >= text.length) return end;
  const c = text.charCodeAt(end);
  if (c === BACKSLASH) return end + 2;
  if (c === CR && text.charCodeAt(end + 1) === LF) return end + 2;
  return end + 1;
}

function skipBlanks(text: string, i: number): number {
  while (text.charCodeAt(i) === SPACE || text.charCodeAt(i) === TAB) i++;
  return i;
}

/** Index of the first character at or after `from` that is not base64. */
function base64RunEnd(text: string, from: number): number {
  let i = from;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 128 || BASE64[c] === 0) break;
  }
  return i;
}

/**
 * If the line whose base64 run ends at `runEnd` is key material (base64 up
 * to trailing blanks, or an RFC 1421 header starting at `first`), returns the
 * index of its terminator; otherwise -1. Reading stops at the first
 * character that cannot belong, never at the line's far end, so a hostile
 * megabyte line after each of many BEGIN markers stays linear.
 */
function bodyLineEnd(text: string, first: number, runEnd: number): number {
  if (isLineEnd(text, runEnd)) return runEnd;
  const after = skipBlanks(text, runEnd);
  if (after > runEnd && isLineEnd(text, after)) return after;
  // Not pure base64: one short header line at most.
  let end = first;
  while (end - first <= MAX_HEADER && !isLineEnd(text, end)) end++;
  if (!isLineEnd(text, end)) return -1;
  return HEADER_LINE.test(text.slice(first, end).trimEnd()) ? end : -1;
}

/** For an END marker at `at`, the index after its closing dashes (or its cut end). */
function endLineClose(text: string, at: number): number {
  let j = at + END.length;
  for (; j - at <= MAX_LABEL + END.length && !isLineEnd(text, j); j++) {
    if (text.startsWith(DASHES, j)) return j + DASHES.length;
  }
  // A cut END line: hide what there is of it.
  return j;
}

/** Scans one block whose BEGIN marker ends at `bodyStart`; returns the span end or -1. */
function blockEnd(text: string, bodyStart: number): number {
  let lineStart = bodyStart;
  let lastGood = -1;
  for (;;) {
    const first = skipBlanks(text, lineStart);
    const runEnd = base64RunEnd(text, first);
    // The END marker usually starts a line, but a key squeezed onto one line
    // (an environment variable) has it right after the base64.
    if (text.startsWith(END, runEnd)) return endLineClose(text, runEnd);
    const end = bodyLineEnd(text, first, runEnd);
    if (end === -1) break;
    if (end > first) lastGood = end;
    if (end >= text.length) break;
    lineStart = nextLineStart(text, end);
  }
  return lastGood;
}

/** @returns the detector for PEM private-key blocks */
export function createPemDetector(): Detector {
  return {
    name: "private_key",
    scan(input: ScanInput, emit: Emit): void {
      const text = input.text;
      let from = 0;
      // Searched from `BEGIN `: an upper-case B is rare in output, five dashes
      // (`-rw-r--r--`) are not, and the search cost follows the first letter.
      for (let hit = text.indexOf(ANCHOR, from); hit !== -1; hit = text.indexOf(ANCHOR, from)) {
        from = hit + ANCHOR.length;
        const at = hit - DASHES.length;
        if (at < 0 || !text.startsWith(DASHES, at)) continue;
        const labelStart = at + BEGIN.length;
        const window = text.slice(labelStart, labelStart + MAX_LABEL + DASHES.length);
        const labelLength = window.indexOf(DASHES);
        if (labelLength === -1) continue;
        if (!PRIVATE_LABEL.test(window.slice(0, labelLength))) continue;
        const close = labelStart + labelLength;
        const bodyStart = close + DASHES.length;
        const end = blockEnd(text, bodyStart);
        if (end === -1) continue;
        emit(at, end, "private_key");
        from = end;
      }
    },
  };
}
