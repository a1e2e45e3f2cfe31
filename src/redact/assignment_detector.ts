/**
 * Values assigned to keys that name a secret: `DB_PASSWORD=x`, `"token": "x"`,
 * `api_key: x`, `--password x`, `--password=x`, `secret := "x"`,
 * `'password' => 'x'`, `AccountKey=x;`. The key stays visible, only the value
 * is hidden, so the model still learns which setting was there.
 *
 * The search is driven by separators, not by key words: every `=`, `:` and
 * `--` is found with `indexOf`, which is far cheaper than a case-insensitive
 * word search, and most are dismissed after a look at one or two characters
 * (a `:` in `09:15`, a `--` in `-rw-r--r--`). Hits are visited in text order
 * and scanning resumes after each value, so repeated or nested assignments
 * (`token=token=token=...`) never rescan the same text.
 *
 * @module
 */
import { BACKSLASH, CR, DQUOTE, IDENT, isBlank, LF, SQUOTE, table } from "./_ascii.ts";
import { isNonSecret, kindFor, type Value } from "./assignment_values.ts";
import { isSecretKeyName, mayEndSecretKeyName } from "./secret_key_names.ts";
import type { Detector, Emit, ScanInput } from "./types.ts";

/** Longest key considered; longer identifiers are code, not settings. */
const MAX_KEY = 64;
/** Blanks allowed around the separator (`password   =   x`). */
const MAX_PAD = 16;

/** Characters that end a bare value after `=` or a flag: whitespace, quotes, list/query separators. */
const WORD_STOP = table(" \t\r\n\v\f\"'`&;,");
/**
 * Characters that end a bare value after `:` (YAML, HTTP headers, prompts),
 * where a value runs to the end of the line (`passphrase: open sesame`) unless
 * JSON-like punctuation closes it first (`{token: abc, user: x}`).
 */
const LINE_STOP = table("\r\n,}]");

const EQUALS = 61;
const COLON = 58;
const DASH = 45;
const SLASH = 47;
const GT = 62;
const DOLLAR = 36;
const LPAREN = 40;
const LBRACKET = 91;
const LBRACE = 123;
/** What may follow the `[` of a JSON list. */
const LIST_SECOND = table("\"'0123456789[]{ \t\r\n-");

/** An authentication scheme before the credential: `token: Bearer <credential>`. */
const SCHEME_PREFIX = /^(?:bearer|basic|token|digest|negotiate|ntlm)[ \t]{1,8}/i;
/** First letters of those schemes, so most values skip the regex. */
const SCHEME_FIRST = table("bBtTdDnN");
function skipPad(bytes: Uint8Array, i: number): number {
  const limit = i + MAX_PAD;
  while (i < limit && isBlank(bytes[i])) i++;
  return i;
}

function openingQuoteLength(bytes: Uint8Array, i: number): number {
  const c = bytes[i];
  if (c === DQUOTE || c === SQUOTE || c === 96) return 1;
  const d = bytes[i + 1];
  return c === BACKSLASH && (d === DQUOTE || d === SQUOTE) ? 2 : 0;
}

/**
 * Reads the value at `at`: quoted (to its closing quote or the line's end) or
 * bare (to a stop character). An authentication scheme before it is skipped
 * and stays visible; a value that is already a marker is passed over.
 */
function readValue(
  input: ScanInput,
  bytes: Uint8Array,
  at: number,
  toLineEnd: boolean,
  enclosingQuote: number,
): Value {
  const quoteLength = openingQuoteLength(bytes, at);
  let start = at + quoteLength;
  if (SCHEME_FIRST[bytes[start]!] === 1) {
    const scheme = SCHEME_PREFIX.exec(input.text.slice(start, start + 24));
    if (scheme !== null) start += scheme[0].length;
  }
  const markerEnd = input.markerEndAt(start);
  if (markerEnd !== -1) return { start, end: start, next: markerEnd, quoted: quoteLength > 0 };
  const n = bytes.length;
  let j = start;
  if (quoteLength > 0) {
    const quote = bytes[at + quoteLength - 1];
    for (; j < n; j++) {
      const c = bytes[j];
      if (c === LF || c === CR) break;
      if (quoteLength === 2 && c === BACKSLASH && bytes[j + 1] === quote) {
        return { start, end: j, next: j + 2, quoted: true };
      }
      if (quoteLength === 1 && c === quote) return { start, end: j, next: j + 1, quoted: true };
      if (c === BACKSLASH) j++; // an escaped character, possibly the quote
    }
    j = Math.min(j, n);
    return { start, end: j, next: j, quoted: true };
  }
  const stop = toLineEnd ? LINE_STOP : WORD_STOP;
  while (j < n && stop[bytes[j]!] === 0 && bytes[j] !== enclosingQuote) {
    // A marker is never part of a value: stopping there judges a kept value
    // the same before and after what follows it was redacted.
    if (bytes[j] === LBRACKET && input.markerEndAt(j) !== -1) break;
    j++;
  }
  const next = j;
  while (j > start && isBlank(bytes[j - 1])) j--;
  return { start, end: j, next, quoted: false };
}

/** The start of the key that ends just before `end`, or -1 when it is too long to be one. */
function keyStartBefore(bytes: Uint8Array, end: number): number {
  let start = end - 1;
  const floor = Math.max(0, end - MAX_KEY - 1);
  while (start > floor && IDENT[bytes[start - 1]!] === 1) start--;
  if (start > 0 && IDENT[bytes[start - 1]!] === 1) return -1;
  return start;
}

/**
 * For a separator at `sep` (`=` or `:`): the key's end, after stepping back
 * over blanks and a closing quote (`"password" :`, `\"token\":`), or -1.
 */
function keyEndBefore(bytes: Uint8Array, sep: number): number {
  let i = sep;
  const floor = Math.max(0, sep - MAX_PAD);
  while (i > floor && isBlank(bytes[i - 1])) i--;
  const q = bytes[i - 1];
  if (q === DQUOTE || q === SQUOTE) {
    i--;
    if (bytes[i - 1] === BACKSLASH) i--;
  }
  return i;
}

/** Where the value after the separator at `sep` starts, or -1 when this is no assignment. */
function valueStartAfter(bytes: Uint8Array, sep: number): number {
  const c = bytes[sep];
  const next = bytes[sep + 1];
  const prev = bytes[sep - 1];
  if (c === EQUALS) {
    // `==`, `!=`, `<=`, `>=`: comparisons, not assignments.
    if (next === EQUALS || prev === EQUALS || prev === 33 || prev === 60 || prev === GT) return -1;
    return skipPad(bytes, sep + (next === GT ? 2 : 1));
  }
  // `::` is a C++/Rust path, `://` a URL.
  if (next === COLON || next === SLASH || prev === COLON) return -1;
  return skipPad(bytes, sep + (next === EQUALS ? 2 : 1));
}

function isLineBreak(b: number | undefined): boolean {
  return b === undefined || b === LF || b === CR;
}

/**
 * Judges the key `[keyStart, keyEnd)` whose separator is at `hit` and whose
 * value starts at `valueAt`; emits the value when it is a secret.
 *
 * @param spaced the `--flag VALUE` form (blank separator)
 * @returns where scanning resumes
 */
function judgeKey(
  input: ScanInput,
  bytes: Uint8Array,
  keyStart: number,
  keyEnd: number,
  hit: number,
  valueAt: number,
  spaced: boolean,
  emit: Emit,
): number {
  const text = input.text;
  const key = text.slice(keyStart, keyEnd);
  if (!isSecretKeyName(key)) return hit + 1;
  // The key was extended over every `-`, so a leading one is a flag's.
  const isFlag = bytes[keyStart] === DASH;
  // `--password --verbose`: the next word is another flag, not the value.
  if (spaced && bytes[valueAt] === DASH) return valueAt;
  // `auth: {...}`, `tokens = [...]`, `token: ${{ secrets.X }}`, `$(vault read)`:
  // a nested structure or a reference, not a literal. Scanning goes on
  // inside it, where the nested keys are judged on their own.
  if (opensStructure(bytes, valueAt)) return valueAt;
  // `key: value` runs to the line's end; `:=` is Go's `=`.
  const toLineEnd = !spaced && bytes[hit] === COLON && bytes[hit + 1] !== EQUALS;
  // `"Authorization: Basic x"`: the whole pair sits inside a quoted
  // string, and its closing quote ends the value.
  const before = keyStart > 0 ? bytes[keyStart - 1]! : 0;
  const enclosingQuote = (before === DQUOTE || before === SQUOTE) && keyEnd === hit ? before : -1;
  const value = readValue(input, bytes, valueAt, toLineEnd, enclosingQuote);
  if (!isNonSecret(text, key, isFlag, value)) {
    emit(value.start, value.end, kindFor(text, key, value));
    return Math.max(hit + 1, value.next);
  }
  // A value kept visible may hold assignments of its own
  // (`x: $(--token: abc)`): scan inside it. It is at most 64 characters
  // (longer values are always hidden), so this stays linear.
  return Math.max(hit + 1, value.end > value.start ? value.start : value.next);
}

/**
 * True when the value at `at` opens an object, a JSON list (`[` then a
 * quote, digit, bracket or blank: `[REDACTED:x]` and `[hunter2]` are not
 * lists), or a `${...}`/`$(...)`/`{{...}}` reference.
 */
function opensStructure(bytes: Uint8Array, at: number): boolean {
  const c = bytes[at];
  const next = bytes[at + 1] ?? 0;
  if (c === LBRACE) return true;
  if (c === LBRACKET) return LIST_SECOND[next] === 1;
  return c === DOLLAR && (next === LBRACE || next === LPAREN);
}

/**
 * `--name VALUE` with the flag at `hit`: the value's start, or -1 when the
 * flag has no blank-separated value on its line (or the `=` form handles it).
 */
function flagValueAt(bytes: Uint8Array, keyEnd: number): number {
  if (!isBlank(bytes[keyEnd]) || !mayEndSecretKeyName(bytes, keyEnd)) return -1;
  const valueAt = skipPad(bytes, keyEnd);
  return isLineBreak(bytes[valueAt]) ? -1 : valueAt;
}

/** The end of the identifier starting at `at`, or -1 when it is longer than a key. */
function identEnd(bytes: Uint8Array, at: number): number {
  let end = at;
  while (end < bytes.length && end - at <= MAX_KEY && IDENT[bytes[end]!] === 1) end++;
  return end - at > MAX_KEY ? -1 : end;
}

/** @returns the detector for secret-named keys and their values */
export function createAssignmentDetector(): Detector {
  return {
    name: "secret_assignment",
    scan(input: ScanInput, emit: Emit): void {
      const text = input.text;
      // Three `indexOf` cursors visited in text order (kept in locals: this
      // loop runs for every `=` and `:` of the output).
      let eq = text.indexOf("=");
      let colon = text.indexOf(":");
      let dashes = text.indexOf("--");
      if (eq === -1 && colon === -1 && dashes === -1) return;
      const bytes = input.bytes();
      let resume = 0;
      for (;;) {
        if (eq !== -1 && eq < resume) eq = text.indexOf("=", resume);
        if (colon !== -1 && colon < resume) colon = text.indexOf(":", resume);
        if (dashes !== -1 && dashes < resume) dashes = text.indexOf("--", resume);
        let hit = eq;
        if (colon !== -1 && (hit === -1 || colon < hit)) hit = colon;
        const isDashes = dashes !== -1 && (hit === -1 || dashes < hit);
        if (isDashes) hit = dashes;
        if (hit === -1) return;
        resume = hit + 1;
        if (isDashes) {
          // `--password VALUE`; `--password=VALUE` is left to the `=` hit.
          if (hit > 0 && IDENT[bytes[hit - 1]!] === 1) continue;
          const keyEnd = identEnd(bytes, hit);
          if (keyEnd === -1) continue;
          resume = keyEnd;
          const valueAt = flagValueAt(bytes, keyEnd);
          if (valueAt === -1) continue;
          resume = judgeKey(input, bytes, hit, keyEnd, keyEnd, valueAt, true, emit);
          continue;
        }
        const keyEnd = keyEndBefore(bytes, hit);
        if (!mayEndSecretKeyName(bytes, keyEnd)) continue;
        const valueAt = valueStartAfter(bytes, hit);
        if (valueAt === -1) continue;
        const keyStart = keyStartBefore(bytes, keyEnd);
        if (keyStart === -1) continue;
        resume = judgeKey(input, bytes, keyStart, keyEnd, hit, valueAt, false, emit);
      }
    },
    scanFrom(input: ScanInput, at: number, _limit: number, emit: Emit): void {
      // A key that starts where an earlier finding ended: the scan above
      // gave up on it when the identifier ran on from that finding.
      const bytes = input.bytes();
      const keyEnd = identEnd(bytes, at);
      if (keyEnd === -1 || keyEnd === at) return;
      if (bytes[at] === DASH) {
        const valueAt = flagValueAt(bytes, keyEnd);
        if (valueAt !== -1) judgeKey(input, bytes, at, keyEnd, keyEnd, valueAt, true, emit);
        if (valueAt !== -1 || isBlank(bytes[keyEnd])) return;
      }
      let sep = keyEnd + openingQuoteLength(bytes, keyEnd);
      if (sep === keyEnd + 1 && bytes[keyEnd] === 96) sep = keyEnd; // a backtick is no key quote
      sep = skipPad(bytes, sep);
      if (bytes[sep] !== EQUALS && bytes[sep] !== COLON) return;
      if (!mayEndSecretKeyName(bytes, keyEnd)) return;
      const valueAt = valueStartAfter(bytes, sep);
      if (valueAt !== -1) judgeKey(input, bytes, at, keyEnd, sep, valueAt, false, emit);
    },
  };
}
