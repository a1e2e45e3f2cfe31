/**
 * The fallback for secrets no pattern knows: long tokens whose characters are
 * close to random. Off by default (`[redaction] entropy_fallback`), because it
 * also hides base64 blobs and integrity hashes that are not secrets.
 *
 * A candidate is a run of base64/base64url characters at least
 * `ENTROPY_MIN_LENGTH` long that mixes digits, upper and lower case and has a
 * Shannon entropy of at least `MIN_BITS_PER_CHAR`. Hex strings (git SHAs,
 * digests, UUIDs) top out at 4 bits per character and are skipped outright.
 * Absolute and home paths are judged segment by segment.
 *
 * Runs are found with the same skip-scan as the token detector: probe the
 * last character of a window, jump the window when it cannot be in a run.
 *
 * @module
 */
import { BASE64_ANY, table } from "./_ascii.ts";
import type { Detector, Emit, ScanInput } from "./types.ts";

/** Shortest token judged; shorter base64 (of ordinary words, say) is left alone. */
export const ENTROPY_MIN_LENGTH = 32;
/**
 * Random base62/base64 of 32+ characters measures about 4.5 to 5 bits per
 * character; identifiers and words run together stay near 3.5 to 4, and hex
 * cannot exceed 4.
 */
const MIN_BITS_PER_CHAR = 4.2;

const LOWER = 1;
const UPPER = 2;
const DIGIT = 4;
const HEX = 8;
const CLASS = new Uint8Array(256);
for (let c = 97; c <= 122; c++) CLASS[c] = LOWER | (c <= 102 ? HEX : 0);
for (let c = 65; c <= 90; c++) CLASS[c] = UPPER | (c <= 70 ? HEX : 0);
for (let c = 48; c <= 57; c++) CLASS[c] = DIGIT | HEX;
CLASS[45] = HEX; // `-` of a UUID

const LEADING_PUNCT = table("-_=");
const SLASH = 47;
const TILDE = 126;
const MIXED = LOWER | UPPER | DIGIT;

/** Judges `bytes[start, end)`; `counts` is scratch for the histogram. */
function looksSecret(bytes: Uint8Array, start: number, end: number, counts: Uint32Array): boolean {
  const length = end - start;
  if (length < ENTROPY_MIN_LENGTH) return false;
  let any = 0;
  let all = HEX;
  for (let i = start; i < end; i++) {
    const k = CLASS[bytes[i]!]!;
    any |= k;
    all &= k;
  }
  if (all === HEX || (any & MIXED) !== MIXED) return false;
  counts.fill(0);
  for (let i = start; i < end; i++) counts[bytes[i]!]! += 1;
  let bits = 0;
  for (let c = 0; c < 128; c++) {
    const count = counts[c]!;
    if (count === 0) continue;
    const p = count / length;
    bits -= p * Math.log2(p);
  }
  return bits >= MIN_BITS_PER_CHAR;
}

/** @returns the high-entropy fallback detector */
export function createEntropyDetector(): Detector {
  const counts = new Uint32Array(256);
  const judge = (bytes: Uint8Array, start: number, end: number, emit: Emit): void => {
    if (looksSecret(bytes, start, end, counts)) emit(start, end, "high_entropy");
  };
  /** Judges the run `[start, end)`: whole, or segment by segment when it is a path. */
  const judgeRun = (bytes: Uint8Array, start: number, end: number, emit: Emit): void => {
    // Leading separators (`-----`, `__`, `==`) belong to whatever came
    // before, not to a secret: judge the token without them.
    while (start < end && LEADING_PUNCT[bytes[start]!] === 1) start++;
    if (end - start < ENTROPY_MIN_LENGTH) return;
    const before = start > 0 ? bytes[start - 1] : 0;
    if (bytes[start] !== SLASH && before !== TILDE) {
      judge(bytes, start, end, emit);
      return;
    }
    // `/usr/lib/x86_64-linux-gnu/...`, `~/x`: judge each segment.
    let segment = start;
    for (let k = start; k <= end; k++) {
      if (k === end || bytes[k] === SLASH) {
        judge(bytes, segment, k, emit);
        segment = k + 1;
      }
    }
  };
  return {
    name: "high_entropy",
    scan(input: ScanInput, emit: Emit): void {
      const bytes = input.bytes();
      const n = bytes.length;
      const L = ENTROPY_MIN_LENGTH;
      let p = 0;
      while (p + L <= n) {
        const probe = p + L - 1;
        if (BASE64_ANY[bytes[probe]!] === 0) {
          p = probe + 1;
          continue;
        }
        let start = probe;
        while (start > p && BASE64_ANY[bytes[start - 1]!] === 1) start--;
        let end = probe + 1;
        while (end < n && BASE64_ANY[bytes[end]!] === 1) end++;
        p = end + 1;
        judgeRun(bytes, start, end, emit);
      }
    },
    scanFrom(input: ScanInput, at: number, limit: number, emit: Emit): void {
      const bytes = input.bytes();
      let end = at;
      while (end < limit && BASE64_ANY[bytes[end]!] === 1) end++;
      judgeRun(bytes, at, end, emit);
    },
    scanTo(input: ScanInput, floor: number, at: number, emit: Emit): void {
      const bytes = input.bytes();
      let start = at;
      while (start > floor && BASE64_ANY[bytes[start - 1]!] === 1) start--;
      judgeRun(bytes, start, at, emit);
    },
  };
}
