/**
 * The line view of a text that holds a private key: each line's rendering
 * prefix removed where that turns the line back into PEM content.
 *
 * Tools that print a file line by line put something before each line:
 * `grep -r` the file name (`keys/id_rsa:`), `grep -rn` also the number
 * (`keys/id_rsa:12:`, context lines `keys/id_rsa-12-`, or `keys/id_rsa-`
 * without `-n`), `cat -n` and `nl` a padded number and a tab, `diff` `< ` and
 * `> `, `diff -u` `-` and `+`, `diff -c` `! `. The PEM block detector reads
 * key material line by line, so one such prefix per line hides the whole
 * key.
 *
 * PEM content is found from the line's end, where it always is: a
 * BEGIN/END line, a trailing run of base64, or an RFC 1421 `Name: value`
 * header. The line is cut there when what precedes it is a prefix (it ends
 * at a `:`, a tab, a `-N-` number field, a `-` after a file name seen before
 * a `:` elsewhere, or is one diff mark). Any other line is kept whole, so the
 * view differs from its source only on lines that look like pieces of a key,
 * and each line costs a look at its tail.
 *
 * The view is only built when the text has a private-key BEGIN or END line,
 * which keeps the cost off ordinary output.
 *
 * @module
 */
import { isPlausibleKeyBody } from "./_key_body.ts";
import { type MatchView, ViewBuilder } from "./_match_view.ts";
import { MAX_LABEL, PRIVATE_LABEL } from "./_pem_syntax.ts";

const CR = 13;
const TAB = 9;
const SPACE = 32;
const COLON = 58;
const DASH = 45;
/** Longest base64 line of a key considered (RFC 7468 says 64; MIME 76). */
const MAX_BASE64_LINE = 128;
/** RFC 1421 header shapes: a name of up to 31 characters, a value of up to 80. */
const MAX_HEADER_NAME = 31;
const MAX_HEADER_VALUE = 80;
/** File names remembered for `path-` context lines; more are not needed to cover real output. */
const MAX_PATHS = 64;

/** What a line holds once its prefix (if any) is cut. */
export type KeyLineKind =
  | "begin" // `-----BEGIN <private label>-----`
  | "end" // `-----END <private label>-----`
  | "marker" // a BEGIN/END line of another label (certificate, public key)
  | "base64"
  | "header"
  | "blank"
  | "other";

/** A classified line: its kind and where its content starts (after the cut). */
export interface KeyLine {
  readonly kind: KeyLineKind;
  readonly at: number;
}

function isBase64(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 ||
    c === 47 || c === 61;
}

function isLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

function isBlank(c: number): boolean {
  return c === SPACE || c === TAB;
}

/** A character of an RFC 1421 header value: `4,ENCRYPTED`, `AES-128-CBC,6A87...`. */
function isHeaderValue(c: number): boolean {
  return isLetter(c) || (c >= 48 && c <= 57) || c === 44 || c === DASH;
}

/** True when the characters before the `-` at `dash` are 1 to 12 digits after a `-` or the line start. */
function endsNumberField(text: string, lineStart: number, dash: number): boolean {
  let i = dash;
  while (i > lineStart && dash - i < 12) {
    const c = text.charCodeAt(i - 1);
    if (c < 48 || c > 57) break;
    i--;
  }
  if (i === dash) return false;
  return i === lineStart || text.charCodeAt(i - 1) === DASH;
}

/**
 * Finds BEGIN/END lines in text order with two cursors that only move
 * forward, so a whole text costs one pass of each search. Searched from
 * `BEGIN `/`END ` (upper-case letters are rare in output, dashes are not).
 */
class MarkerCursor {
  readonly #text: string;
  #begin = -2;
  #end = -2;

  constructor(text: string) {
    this.#text = text;
  }

  #advance(anchor: string, at: number, from: number): number {
    let hit = at;
    if (hit !== -1 && hit < from + 5) hit = this.#text.indexOf(anchor, from + 5);
    while (hit !== -1 && (hit < 5 || !this.#text.startsWith("-----", hit - 5))) {
      hit = this.#text.indexOf(anchor, hit + 1);
    }
    return hit;
  }

  /** Index of the dashes of the first `-----BEGIN `/`-----END ` at or after `from`, or -1. */
  next(from: number): number {
    this.#begin = this.#advance("BEGIN ", this.#begin === -2 ? from : this.#begin, from);
    this.#end = this.#advance("END ", this.#end === -2 ? from : this.#end, from);
    const b = this.#begin === -1 ? Infinity : this.#begin - 5;
    const e = this.#end === -1 ? Infinity : this.#end - 5;
    const first = Math.min(b, e);
    return first === Infinity ? -1 : first;
  }
}

/** For a `-----BEGIN `/`-----END ` line `[at, end)`: its kind, or "other" when malformed. */
function markerKind(text: string, at: number, end: number): KeyLineKind {
  const isBegin = text.startsWith("-----BEGIN ", at);
  if (!isBegin && !text.startsWith("-----END ", at)) return "other";
  const labelStart = at + (isBegin ? 11 : 9);
  const close = labelStart + MAX_LABEL + 5 < end ? -1 : text.indexOf("-----", labelStart);
  if (close === -1 || close + 5 !== end) return "other";
  const label = text.slice(labelStart, close);
  if (!/^[A-Z0-9 ]+$/.test(label)) return "other";
  if (!PRIVATE_LABEL.test(label)) return "marker";
  return isBegin ? "begin" : "end";
}

/**
 * Where a line is cut so that its content starts at `content`, or -1 when
 * what precedes `content` is no rendering prefix. Blanks between the prefix
 * and the content stay (the PEM detector skips them).
 */
export function cutBefore(
  text: string,
  start: number,
  content: number,
  paths: ReadonlySet<string>,
): number {
  let d = content;
  while (d > start && text.charCodeAt(d - 1) === SPACE) d--;
  if (d === start) return start;
  const c = text.charCodeAt(d - 1);
  if (c === COLON || c === TAB) return d;
  // One diff mark: `<`, `>`, `-`, `+`, `!` (then the blank was skipped above).
  if (d === start + 1 && (c === 60 || c === 62 || c === DASH || c === 43 || c === 33)) return d;
  if (c === DASH) {
    if (endsNumberField(text, start, d - 1)) return d;
    if (paths.size > 0 && paths.has(text.slice(start, d - 1))) return d;
  }
  return -1;
}

/** The RFC 1421 header that ends the line at `contentEnd`: its start, or -1. */
function headerStart(text: string, start: number, contentEnd: number): number {
  let v = contentEnd;
  while (v > start && contentEnd - v < MAX_HEADER_VALUE && isHeaderValue(text.charCodeAt(v - 1))) {
    v--;
  }
  let colon = v - 1;
  if (text.charCodeAt(colon) === SPACE) colon--;
  if (colon <= start - 1 || text.charCodeAt(colon) !== COLON) return -1;
  let n = colon;
  while (n > start && colon - n < MAX_HEADER_NAME) {
    const c = text.charCodeAt(n - 1);
    if (!isLetter(c) && c !== DASH) break;
    n--;
  }
  while (n < colon && !isLetter(text.charCodeAt(n))) n++;
  return n < colon ? n : -1;
}

/**
 * Classifies the line `[start, end)` (no terminator) and finds where its
 * content starts once a rendering prefix is cut. Content is read from the
 * line's end: a BEGIN/END line ends in dashes, base64 and headers run to the
 * end.
 */
export function readKeyLine(
  text: string,
  start: number,
  end: number,
  paths: ReadonlySet<string> = NO_PATHS,
): KeyLine {
  let contentEnd = end;
  while (
    contentEnd > start &&
    (isBlank(text.charCodeAt(contentEnd - 1)) || text.charCodeAt(contentEnd - 1) === CR)
  ) {
    contentEnd--;
  }
  if (contentEnd === start) return { kind: "blank", at: start };
  // Only a prefix (`path:4:`, `     7\t`): a blank line of the file.
  const bare = cutBefore(text, start, contentEnd, paths);
  if (bare !== -1) return { kind: "blank", at: bare };
  if (contentEnd - start >= 14 && text.startsWith("-----", contentEnd - 5)) {
    // The dashes that open the marker: the label between has none.
    const open = text.lastIndexOf("-----", contentEnd - 6);
    const kind = open < start ? "other" : markerKind(text, open, contentEnd);
    const at = kind === "other" ? -1 : cutBefore(text, start, open, paths);
    return at === -1 ? { kind: "other", at: start } : { kind, at };
  }
  let b = contentEnd;
  while (b > start && contentEnd - b <= MAX_BASE64_LINE && isBase64(text.charCodeAt(b - 1))) b--;
  if (b < contentEnd && (b === start || !isBase64(text.charCodeAt(b - 1)))) {
    const at = cutBefore(text, start, b, paths);
    if (at !== -1) return { kind: "base64", at };
  }
  const h = headerStart(text, start, contentEnd);
  if (h !== -1) {
    const at = cutBefore(text, start, h, paths);
    if (at !== -1) return { kind: "header", at };
  }
  return { kind: "other", at: start };
}

const NO_PATHS: ReadonlySet<string> = new Set();

/**
 * True when `text` holds a `-----BEGIN ` or `-----END ` line of a private
 * key somewhere (possibly behind a prefix): the only texts whose line view
 * can differ in what it reveals.
 */
export function hasPrivateKeyMarker(text: string): boolean {
  // Searched from `VATE KEY`: `indexOf` goes by the first character, and an
  // upper-case V is far rarer in output than the P of `PATH=` or `PWD=`.
  for (let hit = text.indexOf("VATE KEY"); hit !== -1; hit = text.indexOf("VATE KEY", hit + 1)) {
    if (hit < 3 || !text.startsWith("PRI", hit - 3)) continue;
    const dashes = text.lastIndexOf("-----", hit);
    if (dashes === -1 || hit - dashes > 11 + 40) continue;
    if (text.startsWith("-----BEGIN ", dashes) || text.startsWith("-----END ", dashes)) return true;
  }
  return false;
}

/** The line `[start, end)` around index `at` (end excludes the terminator). */
function lineAround(text: string, at: number): { start: number; end: number } {
  const start = text.lastIndexOf("\n", at - 1) + 1;
  const end = text.indexOf("\n", at);
  return { start, end: end === -1 ? text.length : end };
}

/** What a walk over a text's PEM blocks found. */
export interface KeyBlocks {
  /** Each line of a block, with its cut: start, end, content start, in text order. */
  readonly lines: readonly number[];
  /** False when some private-key BEGIN/END line is not part of a well-formed block. */
  readonly wellFormed: boolean;
  /** File names of `path:` prefixes on BEGIN/END lines. */
  readonly paths: ReadonlySet<string>;
}

/**
 * Walks every private-key block from its BEGIN line: the BEGIN line, then
 * key material (base64, headers, blank lines), then an END line or the
 * first other line (a block cut short). Lines are read with their
 * rendering prefix cut; the BEGIN line's prefix tells the file name of
 * `path-` context lines. Costs one pass of the marker search plus the
 * blocks' own lines, so ordinary text around a key costs nothing.
 *
 * A block is malformed when its BEGIN line has no key material after it, an
 * END line closes no block (the shapes `sort`, `tac` and `grep -v` leave),
 * or its material is not a key in order (`grep -rn . | sort`, see
 * `_key_body.ts`).
 */
export function walkKeyBlocks(text: string): KeyBlocks {
  const lines: number[] = [];
  const paths = new Set<string>();
  const markers = new MarkerCursor(text);
  let wellFormed = true;
  let at = markers.next(0);
  while (at !== -1) {
    const marker = lineAround(text, at);
    const head = readKeyLine(text, marker.start, marker.end, paths);
    if (
      (head.kind === "begin" || head.kind === "end") && head.at > marker.start &&
      text.charCodeAt(head.at - 1) === COLON && paths.size < MAX_PATHS
    ) {
      // `path:` or `path:12:`: remember `path` for its `path-` context lines.
      const colon = text.indexOf(":", marker.start);
      if (colon < head.at) paths.add(text.slice(marker.start, colon));
    }
    if (head.kind === "end") wellFormed = false;
    if (head.kind !== "begin") {
      at = markers.next(marker.end + 1);
      continue;
    }
    lines.push(marker.start, marker.end, head.at);
    const labelAt = text.indexOf("BEGIN ", head.at) + 6;
    const label = text.slice(labelAt, text.indexOf("-----", labelAt));
    let material = 0;
    let bodyHead = "";
    let length = 0;
    let headers = false;
    let closed = false;
    let start = marker.end + 1;
    while (start < text.length) {
      let end = text.indexOf("\n", start);
      if (end === -1) end = text.length;
      const line = readKeyLine(text, start, end, paths);
      if (line.kind === "base64" || line.kind === "header" || line.kind === "blank") {
        if (line.kind === "header") headers = true;
        if (line.kind === "base64") {
          const content = text.slice(line.at, end).trim();
          if (material === 0) bodyHead = content.slice(0, 24);
          length += content.length;
        }
        if (line.kind !== "blank") material++;
        lines.push(start, end, line.at);
        start = end + 1;
        continue;
      }
      if (line.kind === "end" && material > 0) {
        lines.push(start, end, line.at);
        start = end + 1;
        closed = true;
      }
      break;
    }
    if (material === 0) wellFormed = false;
    else if (!isPlausibleKeyBody({ label, head: bodyHead, length, closed, headers })) {
      wellFormed = false;
    }
    at = markers.next(start);
  }
  return { lines, wellFormed, paths };
}

/**
 * The line view of `text` (see the module comment) for the lines of its
 * PEM blocks, mapped through `parent` when `text` is itself a view; null
 * when no block line had a prefix to cut.
 */
export function keyLineView(
  text: string,
  blocks: KeyBlocks,
  parent: MatchView | null,
): MatchView | null {
  const view = new ViewBuilder(text);
  let kept = 0;
  const lines = blocks.lines;
  for (let i = 0; i < lines.length; i += 3) {
    const start = lines[i]!;
    const cut = lines[i + 2]!;
    if (cut === start) continue;
    view.keep(kept, start);
    kept = cut;
  }
  view.keep(kept, text.length);
  return view.build(parent);
}
