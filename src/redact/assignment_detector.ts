/**
 * Values assigned to keys that name a secret: `DB_PASSWORD=x`, `"token": "x"`,
 * `api_key: x`, `--password x`, `--password=x`, `secret := "x"`,
 * `'password' => 'x'`. The key stays visible, only the value is hidden, so
 * the model still learns which setting was there.
 *
 * Search is cheap: one pass over the lower-cased text for a few keywords
 * every secret key contains, then a bounded look at the identifier around
 * each hit. Scanning resumes after each value, so nested or repeated
 * assignments (`token=token=token=...`) never rescan the same text.
 *
 * @module
 */
import { isAwsSecretKeyName, isSecretKeyName } from "./secret_key_names.ts";
import type { Detector, Emit, ScanInput } from "./types.ts";

/** Every key `isSecretKeyName` accepts contains one of these (lower-case). */
const KEYWORDS = /pass|pwd|secret|token|auth|credential|key/g;
/** Longest key considered; longer identifiers are code, not settings. */
const MAX_KEY = 64;
/** Spaces allowed around the separator (`password   =   x`). */
const MAX_PAD = 16;
const MARKER = "[REDACTED:";

const IDENT = new Uint8Array(128);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") {
  IDENT[c.charCodeAt(0)] = 1;
}
/** Characters that end an unquoted value: whitespace, quotes, and list/query separators. */
const VALUE_STOP = new Uint8Array(128);
for (const c of " \t\r\n\v\f\"'`&;,") VALUE_STOP[c.charCodeAt(0)] = 1;

const SPACE = 32;
const TAB = 9;
const BACKSLASH = 92;
const LF = 10;
const CR = 13;

/** Words that say "no value here", not a secret. */
const NON_VALUES: ReadonlySet<string> = new Set([
  "null",
  "nil",
  "none",
  "true",
  "false",
  "undefined",
]);
/** An authentication scheme before the credential: `token: Bearer <credential>`. */
const SCHEME_PREFIX = /^(?:bearer|basic|token|digest|negotiate|ntlm)[ \t]{1,8}/i;
/** How help text names an argument: `--password PASSWORD`, `--token <token>`. */
const METAVAR = /^(?:[A-Z][A-Z0-9_-]*|<[^>]*>?|\{[^}]*\}?|\[[^\]]*\]?)$/;
const AWS_SECRET_VALUE = /^[A-Za-z0-9/+]{40}$/;
const PWD_KEY = /pwd$/i;

function isIdent(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return c < 128 && IDENT[c] === 1;
}

function isLineBreak(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return c === LF || c === CR || Number.isNaN(c);
}

function skipPad(text: string, i: number): number {
  const limit = i + MAX_PAD;
  while (i < limit && (text.charCodeAt(i) === SPACE || text.charCodeAt(i) === TAB)) i++;
  return i;
}

/**
 * Where the separator after a key ends, or -1 when the key is not being
 * assigned. `~at` (negative, below -1) marks the blank-only separator of
 * `--password VALUE`.
 */
function separatorEnd(text: string, keyEnd: number, isFlag: boolean): number {
  let i = keyEnd;
  const c0 = text.charCodeAt(i);
  // Closing quote of a quoted key: `"password":`, `\"password\":`, `'password' =>`.
  if (c0 === BACKSLASH && (text[i + 1] === '"' || text[i + 1] === "'")) i += 2;
  else if (c0 === 34 || c0 === 39) i += 1;
  const padded = skipPad(text, i);
  const c = text[padded];
  if (c === "=") {
    if (text[padded + 1] === "=") return -1; // a comparison, not an assignment
    return skipPad(text, padded + (text[padded + 1] === ">" ? 2 : 1));
  }
  if (c === ":") {
    if (text[padded + 1] === ":" || text[padded + 1] === "/") return -1; // C++ scope, a URL
    return skipPad(text, padded + (text[padded + 1] === "=" ? 2 : 1));
  }
  // `--password VALUE`: a flag, then blanks, then the value on the same line.
  if (isFlag && padded > i && i === keyEnd && !isLineBreak(text, padded)) return ~padded;
  return -1;
}

/** The outcome of reading a value: the part to hide (or none) and where scanning resumes. */
interface Value {
  readonly start: number;
  readonly end: number;
  readonly next: number;
}

function openingQuote(text: string, i: number): string {
  const c = text[i];
  if (c === '"' || c === "'" || c === "`") return c;
  const d = text[i + 1];
  if (c === "\\" && (d === '"' || d === "'")) return c + d;
  return "";
}

/**
 * Reads the value at `at`: quoted (to its closing quote or the line's end) or
 * bare (to a stop character). An authentication scheme before it is skipped
 * and stays visible; a value that is already a marker is passed over.
 */
function readValue(text: string, at: number): Value {
  const quote = openingQuote(text, at);
  let start = at + quote.length;
  const scheme = SCHEME_PREFIX.exec(text.slice(start, start + 24));
  if (scheme !== null) start += scheme[0].length;
  if (text.startsWith(MARKER, start)) {
    const close = text.indexOf("]", start);
    const next = close === -1 || close - start > 80 ? start + MARKER.length : close + 1;
    return { start, end: start, next };
  }
  let j = start;
  if (quote !== "") {
    for (; j < text.length; j++) {
      const c = text.charCodeAt(j);
      if (c === LF || c === CR) break;
      if (text.startsWith(quote, j)) return { start, end: j, next: j + quote.length };
      if (c === BACKSLASH) j++; // an escaped character, possibly the quote
    }
    j = Math.min(j, text.length);
    return { start, end: j, next: j };
  }
  for (; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c < 128 && VALUE_STOP[c] === 1) break;
  }
  return { start, end: j, next: j };
}

/** True when the value is not a secret: empty, a null word, help-text metavar, a working directory. */
function isNonSecret(text: string, key: string, isFlag: boolean, value: Value): boolean {
  const length = value.end - value.start;
  if (length === 0) return true;
  if (length > 64) return false;
  const raw = text.slice(value.start, value.end);
  if (NON_VALUES.has(raw.toLowerCase())) return true;
  if (isFlag && METAVAR.test(raw)) return true;
  // `PWD=/home/me` is the working directory, not a password.
  return PWD_KEY.test(key) && (raw.startsWith("/") || raw.startsWith("~"));
}

/** @returns the detector for secret-named keys and their values */
export function createAssignmentDetector(): Detector {
  const keywords = new RegExp(KEYWORDS.source, "g");
  return {
    name: "secret_assignment",
    scan(input: ScanInput, emit: Emit): void {
      const text = input.text;
      const lower = input.lower();
      keywords.lastIndex = 0;
      for (let m = keywords.exec(lower); m !== null; m = keywords.exec(lower)) {
        const hit = m.index;
        let keyStart = hit;
        while (keyStart > 0 && hit - keyStart <= MAX_KEY && isIdent(text, keyStart - 1)) keyStart--;
        let keyEnd = hit + m[0].length;
        while (keyEnd < text.length && keyEnd - hit <= MAX_KEY && isIdent(text, keyEnd)) keyEnd++;
        keywords.lastIndex = keyEnd;
        if (hit - keyStart > MAX_KEY || keyEnd - hit > MAX_KEY) continue;
        const key = text.slice(keyStart, keyEnd);
        if (!isSecretKeyName(key)) continue;
        // The identifier was extended over every `-`, so a leading one is a flag's.
        const isFlag = key.startsWith("-");
        const separator = separatorEnd(text, keyEnd, isFlag);
        if (separator === -1) continue;
        const spaced = separator < -1;
        const valueAt = spaced ? ~separator : separator;
        // `--password --verbose`: the next word is another flag, not the value;
        // resume right there so that flag is examined too.
        if (spaced && text[valueAt] === "-") {
          keywords.lastIndex = valueAt;
          continue;
        }
        const value = readValue(text, valueAt);
        keywords.lastIndex = Math.max(keyEnd, value.next);
        if (isNonSecret(text, key, isFlag, value)) continue;
        const secret = value;
        const kind = isAwsSecretKeyName(key) &&
            AWS_SECRET_VALUE.test(text.slice(secret.start, secret.end))
          ? "aws_secret_access_key"
          : "secret_assignment";
        emit(secret.start, secret.end, kind);
      }
    },
  };
}
