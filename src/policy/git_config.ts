/**
 * Reads a git configuration file the way git 2.39's `config.c`
 * (`git_parse_source`, `get_base_var`, `get_value`, `parse_value`) does, so
 * that htmcp judges the very keys and values git will use. A repository in
 * the jail is untrusted input: its `.git/config` can be written by the
 * model, so this parser fails closed: anything git might read differently
 * (a NUL byte, bytes that are not UTF-8, a line git rejects) is an error,
 * and the caller refuses the command. `include.path` is not followed here;
 * the caller refuses it.
 *
 * @module
 */

/** One `section[.subsection].name = value` entry. */
export interface GitConfigEntry {
  /** Lowercased section name (`remote`). */
  readonly section: string;
  /** Subsection as written (`origin`), or null. Old-style `[a.b]` subsections are lowercased. */
  readonly subsection: string | null;
  /** Lowercased variable name (`uploadpack`). */
  readonly name: string;
  /** The value after unquoting, or null for a bare `name` (boolean true). */
  readonly value: string | null;
}

/** The parse of one file: its entries, or why it cannot be read as git reads it. */
export type GitConfigParse =
  | { readonly ok: true; readonly entries: readonly GitConfigEntry[] }
  | { readonly ok: false; readonly why: string };

const isKeyChar = (c: string) => /^[A-Za-z0-9-]$/.test(c);
// git's isspace (sane_ctype): space, \t, \n, \r, and also \v and \f are not spaces there.
const isSpace = (c: string) => c === " " || c === "\t" || c === "\n" || c === "\r";

class Source {
  readonly #text: string;
  #at = 0;
  eof = false;
  constructor(text: string) {
    // config.c skips a UTF-8 byte order mark at the start.
    this.#text = text.startsWith("\uFEFF") ? text.slice(1) : text;
  }
  /** get_next_char(): CRLF reads as LF; the end reads as LF with `eof` set. */
  next(): string {
    if (this.#at >= this.#text.length) {
      this.eof = true;
      return "\n";
    }
    let c = this.#text[this.#at++] as string;
    if (c === "\r" && this.#text[this.#at] === "\n") {
      this.#at++;
      c = "\n";
    }
    return c;
  }
}

/** `parse_value()`: quotes, escapes, comments and inner blanks as git keeps them. */
function parseValue(source: Source): string | null {
  let value = "";
  let quote = false;
  let comment = false;
  let spaces = 0;
  for (;;) {
    let c = source.next();
    if (c === "\n") return quote ? null : value;
    if (comment) continue;
    if (isSpace(c) && !quote) {
      if (value.length > 0) spaces++;
      continue;
    }
    if (!quote && (c === ";" || c === "#")) {
      comment = true;
      continue;
    }
    value += " ".repeat(spaces);
    spaces = 0;
    if (c === "\\") {
      c = source.next();
      if (c === "\n") {
        if (source.eof) return null;
        continue;
      }
      const escaped = ({ t: "\t", b: "\b", n: "\n", "\\": "\\", '"': '"' } as Record<
        string,
        string
      >)[c];
      if (escaped === undefined) return null;
      value += escaped;
      continue;
    }
    if (c === '"') {
      quote = !quote;
      continue;
    }
    value += c;
  }
}

/** `get_base_var()` after `[`: the lowercased section and the subsection, or null. */
function parseSectionHeader(
  source: Source,
): { section: string; subsection: string | null } | null {
  let base = "";
  for (;;) {
    const c = source.next();
    if (source.eof) return null;
    if (c === "]") break;
    if (isSpace(c)) {
      // get_extended_base_var(): `[section "sub"]`, the subsection kept as written.
      let d = c;
      while (isSpace(d)) {
        if (d === "\n") return null;
        d = source.next();
      }
      if (d !== '"') return null;
      let sub = "";
      for (;;) {
        let e = source.next();
        if (e === "\n") return null;
        if (e === '"') break;
        if (e === "\\") {
          e = source.next();
          if (e === "\n") return null;
        }
        sub += e;
      }
      if (source.next() !== "]") return null;
      if (base.length === 0) return null;
      // `[a.b "c"]` is the key prefix `a.b.c`: section `a`, subsection `b.c`.
      const [section, ...rest] = base.split(".");
      return { section: section as string, subsection: [...rest, sub].join(".") };
    }
    if (!isKeyChar(c) && c !== ".") return null;
    base += c.toLowerCase();
  }
  if (base.length === 0) return null;
  const dot = base.indexOf(".");
  // Old-style `[section.sub]`: git lowercases the subsection too.
  return dot === -1
    ? { section: base, subsection: null }
    : { section: base.slice(0, dot), subsection: base.slice(dot + 1) };
}

/**
 * Parses one configuration file's text.
 *
 * @param text The file's content, decoded as UTF-8 by the caller.
 * @returns The entries in file order, or why git might read the file otherwise.
 *
 * @example
 * ```ts
 * import { parseGitConfig } from "./git_config.ts";
 * parseGitConfig('[remote "o"]\n\turl = https://example.com/x.git\n');
 * // { ok: true, entries: [{ section: "remote", subsection: "o", name: "url", value: "https://..." }] }
 * ```
 */
export function parseGitConfig(text: string): GitConfigParse {
  // git reads values as C strings: a NUL would end a value early for git but not here.
  if (text.includes("\0")) return { ok: false, why: "it contains a NUL byte" };
  const source = new Source(text);
  const entries: GitConfigEntry[] = [];
  let header: { section: string; subsection: string | null } | null = null;
  let comment = false;
  for (;;) {
    const c = source.next();
    if (c === "\n") {
      if (source.eof) return { ok: true, entries };
      comment = false;
      continue;
    }
    if (comment || isSpace(c)) continue;
    if (c === "#" || c === ";") {
      comment = true;
      continue;
    }
    if (c === "[") {
      header = parseSectionHeader(source);
      if (header === null) return { ok: false, why: "it has a section header git rejects" };
      continue;
    }
    if (!/^[A-Za-z]$/.test(c)) return { ok: false, why: `it has a line git rejects` };
    if (header === null) return { ok: false, why: "it has a variable outside any section" };
    let name = c.toLowerCase();
    let d = source.next();
    while (!source.eof && isKeyChar(d)) {
      name += d.toLowerCase();
      d = source.next();
    }
    while (d === " " || d === "\t") d = source.next();
    let value: string | null = null;
    if (d !== "\n") {
      if (d !== "=") return { ok: false, why: 'a variable is not followed by "="' };
      value = parseValue(source);
      if (value === null) return { ok: false, why: "a value is malformed" };
    }
    entries.push({ ...header, name, value });
    if (source.eof) return { ok: true, entries };
  }
}

/** `section.subsection.name`, as `git config --list` prints it. */
export function entryKey(entry: GitConfigEntry): string {
  return entry.subsection === null
    ? `${entry.section}.${entry.name}`
    : `${entry.section}.${entry.subsection}.${entry.name}`;
}
