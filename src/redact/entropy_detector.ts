/**
 * The fallback for secrets no pattern knows: long tokens whose characters are
 * close to random. Off by default (`[redaction] entropy_fallback`), because it
 * also hides base64 blobs and integrity hashes that are not secrets.
 *
 * A candidate is a run of base64/base64url characters at least
 * `MIN_LENGTH` long that mixes digits, upper and lower case and has a Shannon
 * entropy of at least `MIN_BITS_PER_CHAR`. Hex strings (git SHAs, digests,
 * UUIDs) top out at 4 bits per character and are skipped outright, as are
 * path segments, which are judged one by one.
 *
 * @module
 */
import type { Detector, Emit, ScanInput } from "./types.ts";

/** Shortest token judged; shorter base64 (of ordinary words, say) is left alone. */
export const ENTROPY_MIN_LENGTH = 32;
/**
 * Random base62/base64 of 32+ characters measures about 4.5 to 5 bits per
 * character; identifiers and words made into one long token stay near 3.5
 * to 4.
 */
const MIN_BITS_PER_CHAR = 4.2;

const CLASS_LOWER = 1;
const CLASS_UPPER = 2;
const CLASS_DIGIT = 4;
const CLASS_OTHER = 8;
const CLASS = new Uint8Array(128);
for (let c = 97; c <= 122; c++) CLASS[c] = CLASS_LOWER;
for (let c = 65; c <= 90; c++) CLASS[c] = CLASS_UPPER;
for (let c = 48; c <= 57; c++) CLASS[c] = CLASS_DIGIT;
for (const c of "+/=_-") CLASS[c.charCodeAt(0)] = CLASS_OTHER;

const SLASH = 47;
const TILDE = 126;
const MIXED = CLASS_LOWER | CLASS_UPPER | CLASS_DIGIT;

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

/** Shannon entropy in bits per character of `text[start, end)`, ASCII only. */
function bitsPerChar(text: string, start: number, end: number, counts: Uint32Array): number {
  counts.fill(0);
  for (let i = start; i < end; i++) counts[text.charCodeAt(i)]! += 1;
  const length = end - start;
  let bits = 0;
  for (let c = 0; c < 128; c++) {
    const n = counts[c]!;
    if (n === 0) continue;
    const p = n / length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

function looksSecret(text: string, start: number, end: number, counts: Uint32Array): boolean {
  if (end - start < ENTROPY_MIN_LENGTH) return false;
  let classes = 0;
  let hexOnly = true;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    classes |= CLASS[c]!;
    if (hexOnly && !isHex(c) && c !== 45) hexOnly = false;
  }
  if (hexOnly || (classes & MIXED) !== MIXED) return false;
  return bitsPerChar(text, start, end, counts) >= MIN_BITS_PER_CHAR;
}

/** @returns the high-entropy fallback detector */
export function createEntropyDetector(): Detector {
  const counts = new Uint32Array(128);
  const judge = (text: string, start: number, end: number, emit: Emit): void => {
    if (looksSecret(text, start, end, counts)) emit(start, end, "high_entropy");
  };
  return {
    name: "high_entropy",
    scan(input: ScanInput, emit: Emit): void {
      const text = input.text;
      const n = text.length;
      let i = 0;
      while (i < n) {
        const c = text.charCodeAt(i);
        if (c >= 128 || CLASS[c] === 0) {
          i++;
          continue;
        }
        const start = i;
        while (i < n) {
          const d = text.charCodeAt(i);
          if (d >= 128 || CLASS[d] === 0) break;
          i++;
        }
        if (i - start < ENTROPY_MIN_LENGTH) continue;
        const before = start > 0 ? text.charCodeAt(start - 1) : 0;
        const pathLike = c === SLASH || before === TILDE;
        if (!pathLike) {
          judge(text, start, i, emit);
          continue;
        }
        // `/usr/lib/x86_64-linux-gnu/...`, `./a/b`, `~/x`: judge each segment.
        let segment = start;
        for (let k = start; k <= i; k++) {
          if (k === i || text.charCodeAt(k) === SLASH) {
            judge(text, segment, k, emit);
            segment = k + 1;
          }
        }
      }
    },
  };
}
