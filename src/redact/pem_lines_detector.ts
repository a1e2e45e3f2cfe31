/**
 * Private-key lines out of their block: `sort`, `sort -r`, `tac`,
 * `grep -v BEGIN` or `shuf` on a key file print its base64 lines with the
 * BEGIN and END lines elsewhere (or nowhere), so the block detector finds
 * an empty block or none and the key material stays visible.
 *
 * The evidence is a private-key BEGIN or END line that is not part of a
 * well-formed block (BEGIN, key material, then END, or a block cut short):
 * an END with no open block, a BEGIN followed directly by END or by text
 * that is no key material. When the text has such a line, every line in it
 * that looks like a base64 line of a key is hidden, wherever it stands. The
 * marker lines themselves are not secret and stay (a BEGIN line in prose or
 * source code hides nothing), and a text whose blocks are all well formed is
 * left to the block detector.
 *
 * This detector reads the line view (prefixes cut, see `_key_lines.ts`), so
 * `sort key | cat -n` is covered too.
 *
 * @module
 */
import { table } from "./_ascii.ts";
import { cutBefore, walkKeyBlocks } from "./_key_lines.ts";
import type { Detector, Emit, ScanInput } from "./types.ts";

/** A key's base64 lines are 64 (RFC 7468), 70 (OpenSSH) or 76 (MIME) wide; the last is shorter. */
const MAX_KEY_LINE = 100;
/** Shorter base64 lines are too short to matter and too likely to be words. */
const MIN_KEY_LINE = 4;
const LONG_LINE = 16;

const BASE64 = table("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=");
const EQUALS = 61;

/**
 * True when `bytes[start, end)` reads as one line of a key's base64: the
 * alphabet with `=` padding only at the end; a long line mixes both cases
 * (or letters and digits), a short one (a key's last line) holds a digit and
 * a letter or ends in padding. `Makefile`, `README`, `/bin` and `2024`
 * are not key lines.
 */
function isKeyLine(bytes: Uint8Array, start: number, end: number): boolean {
  const length = end - start;
  if (length < MIN_KEY_LINE || length > MAX_KEY_LINE) return false;
  let padding = 0;
  let upper = false;
  let lower = false;
  let digit = false;
  for (let i = start; i < end; i++) {
    const c = bytes[i]!;
    if (c === EQUALS) {
      padding++;
      continue;
    }
    if (padding > 0) return false; // `=` inside: an assignment, not base64
    if (c >= 65 && c <= 90) upper = true;
    else if (c >= 97 && c <= 122) lower = true;
    else if (c >= 48 && c <= 57) digit = true;
  }
  if (padding > 2) return false;
  if (length >= LONG_LINE) return (upper && lower) || (digit && (upper || lower));
  return padding > 0 || (digit && (upper || lower));
}

/** @returns the detector for private-key lines whose block was broken up */
export function createPemLinesDetector(): Detector {
  return {
    name: "private_key_lines",
    scan(input: ScanInput, emit: Emit): void {
      const text = input.text;
      const blocks = walkKeyBlocks(text);
      if (blocks.wellFormed) return;
      // Every line is looked at from its end, where a key line's base64
      // sits behind whatever prefix the rendering added.
      const bytes = input.bytes();
      const n = bytes.length;
      for (let start = 0; start < n;) {
        let end = text.indexOf("\n", start);
        if (end === -1) end = n;
        let last = end;
        while (last > start && bytes[last - 1]! <= 32) last--;
        let first = last;
        while (first > start && last - first <= MAX_KEY_LINE && BASE64[bytes[first - 1]!] === 1) {
          first--;
        }
        const whole = first === start || BASE64[bytes[first - 1]!] === 0;
        if (
          whole && isKeyLine(bytes, first, last) &&
          cutBefore(text, start, first, blocks.paths) !== -1
        ) {
          emit(first, last, "private_key");
        }
        start = end + 1;
      }
    },
  };
}
