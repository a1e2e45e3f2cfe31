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
import { readKeyLine, walkKeyBlocks } from "./_key_lines.ts";
import type { Detector, Emit, ScanInput } from "./types.ts";

/** A key's base64 lines are 64 (RFC 7468), 70 (OpenSSH) or 76 (MIME) wide; the last is shorter. */
const MAX_KEY_LINE = 100;
/** Shorter base64 lines are too short to matter and too likely to be words. */
const MIN_KEY_LINE = 4;

/**
 * True when `text[start, end)` reads as one line of a key's base64: the
 * alphabet with `=` padding only at the end, and either long with mixed case
 * or holding a digit, `+`, `/` or padding (so `Makefile` or `README` is not).
 */
function isKeyLine(text: string, start: number, end: number): boolean {
  const length = end - start;
  if (length < MIN_KEY_LINE || length > MAX_KEY_LINE) return false;
  let padding = 0;
  let upper = false;
  let lower = false;
  let marked = false;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 61) {
      padding++;
      continue;
    }
    if (padding > 0) return false; // `=` inside: an assignment, not base64
    if (c >= 65 && c <= 90) upper = true;
    else if (c >= 97 && c <= 122) lower = true;
    else if ((c >= 48 && c <= 57) || c === 43 || c === 47) marked = true;
    else return false;
  }
  if (padding > 2) return false;
  return marked || padding > 0 || (length >= 16 && upper && lower);
}

/** @returns the detector for private-key lines whose block was broken up */
export function createPemLinesDetector(): Detector {
  return {
    name: "private_key_lines",
    scan(input: ScanInput, emit: Emit): void {
      const text = input.text;
      const blocks = walkKeyBlocks(text);
      if (blocks.wellFormed) return;
      for (let start = 0; start < text.length;) {
        let end = text.indexOf("\n", start);
        if (end === -1) end = text.length;
        const line = readKeyLine(text, start, end, blocks.paths);
        if (line.kind === "base64") {
          let first = line.at;
          while (text.charCodeAt(first) === 32 || text.charCodeAt(first) === 9) first++;
          let last = end;
          while (last > first && text.charCodeAt(last - 1) <= 32) last--;
          if (isKeyLine(text, first, last)) emit(first, last, "private_key");
        }
        start = end + 1;
      }
    },
  };
}
